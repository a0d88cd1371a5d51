/**
 * DecodedVersions: every read goes to storage (a new version, a deleted object are seen at once),
 * a version read before is the same object, not decoded again; the oldest versions are let go.
 */
import test from 'ava';
import { DecodedVersions } from '../../../../apiserver/handlers/decoded-versions';
import { admin, apiError, configMap, withStore } from '../store/fixture';

test('the same version is the same object; a new version or a deletion is seen on the next read', (t) =>
  withStore(async (f) => {
    const cms = f.type('configmaps');
    const versions = new DecodedVersions();
    const stored = await f.store.create(cms, 'default', configMap('a'), admin);
    const first = await versions.get(f.store, cms, 'default', 'a');
    t.deepEqual(first, stored);
    t.is(await versions.get(f.store, cms, 'default', 'a'), first, 'not decoded again');
    const { object: updated } = await f.store.update(cms, 'default', 'a', (cur) => ({ ...cur!, data: { changed: 'yes' } }), admin);
    const second = await versions.get(f.store, cms, 'default', 'a');
    t.not(second, first);
    t.deepEqual(second, updated);
    await f.store.delete(cms, 'default', 'a', {}, admin);
    t.is((await apiError(() => versions.get(f.store, cms, 'default', 'a'))).code, 404);
  }));

test('at most `max` versions are kept: the oldest is decoded again', (t) =>
  withStore(async (f) => {
    const cms = f.type('configmaps');
    const versions = new DecodedVersions(2);
    for (const name of ['a', 'b', 'c']) await f.store.create(cms, 'default', configMap(name), admin);
    const a = await versions.get(f.store, cms, 'default', 'a');
    const b = await versions.get(f.store, cms, 'default', 'b');
    await versions.get(f.store, cms, 'default', 'c');
    t.is(await versions.get(f.store, cms, 'default', 'b'), b, 'still kept');
    const again = await versions.get(f.store, cms, 'default', 'a');
    t.not(again, a, 'let go, decoded again');
    t.deepEqual(again, a);
  }));
