/**
 * Server-side apply conformance, in process (issue 18): merging by the schema's markers on the
 * built-in kinds — listType map (by key fields, a missing key taking its default), set and
 * atomic; mapType and structType atomic; granular maps — with the sets upstream writes.
 */
import test from 'ava';
import { apply, applyError, get, managedFields, withStore } from './apply-fixture';

const pod = (containers: unknown[], extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', ...meta },
  spec: { containers, ...extra },
});

const entry = (mf: any[], manager: string) => mf.find((e) => e.manager === manager)?.fieldsV1;

const service = (ports: unknown[], extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports, ...extra } });
const port = (name: string, n: number) => ({ name, port: n });
const portKey = (n: number) => `k:{"port":${n},"protocol":"TCP"}`;

test('listType map: appliers own their own elements by key; dropping an element removes it and leaves the other applier’s', (t) =>
  withStore(async (f) => {
    await apply(f, service([port('a', 1)]), 'one');
    await apply(f, service([port('b', 2)]), 'two');
    t.deepEqual(
      (await get(f, 'Service', 's')).spec.ports.map((p: any) => p.name),
      ['a', 'b'],
    );
    const mf = await managedFields(f, 'Service', 's');
    // Service ports are keyed by port and protocol; protocol, left out, takes its default TCP.
    t.deepEqual(entry(mf, 'one'), { 'f:spec': { 'f:ports': { [portKey(1)]: { '.': {}, 'f:name': {}, 'f:port': {} } } } });
    t.deepEqual(entry(mf, 'two'), { 'f:spec': { 'f:ports': { [portKey(2)]: { '.': {}, 'f:name': {}, 'f:port': {} } } } });
    await apply(f, service([port('c', 3)]), 'one');
    t.deepEqual(
      (await get(f, 'Service', 's')).spec.ports.map((p: any) => p.name),
      ['b', 'c'],
    );
  }));

test('listType map: live elements an applier does not name keep their place between the ones it does', (t) =>
  withStore(async (f) => {
    await apply(f, service([port('a', 1), port('b', 2), port('c', 3)]), 'one');
    await apply(f, service([port('c', 3), port('x', 9), port('a', 1)]), 'two');
    // upstream's merge order: a is shared but named after c, so it waits; b (live only) stays in place.
    t.deepEqual(
      (await get(f, 'Service', 's')).spec.ports.map((p: any) => p.name),
      ['b', 'c', 'x', 'a'],
    );
  }));

test('listType map with two keys: a key field left out takes its default (ports by containerPort and protocol TCP)', (t) =>
  withStore(async (f) => {
    await apply(f, pod([{ name: 'web', image: 'i', ports: [{ name: 'foo', containerPort: 80 }] }]), 'one');
    const ports = entry(await managedFields(f, 'Pod', 'p'), 'one')['f:spec']['f:containers']['k:{"name":"web"}']['f:ports'];
    t.deepEqual(ports, { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:name': {} } });
    // upstream's TestDefaultMissingKeys: the same element named with its protocol, another name: one conflict.
    const err = await applyError(f, pod([{ name: 'web', image: 'i', ports: [{ name: 'bar', containerPort: 80, protocol: 'TCP' }] }]), 'two');
    t.is(err.code, 409);
    t.deepEqual(
      err.details?.causes?.map((c) => c.field),
      ['.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].name'],
    );
  }));

test('listType atomic: the whole list is one field, a conflict as a whole; force moves it', (t) =>
  withStore(async (f) => {
    await apply(f, service([port('a', 1)], { externalIPs: ['192.0.2.1', '192.0.2.2'] }), 'one');
    t.deepEqual(entry(await managedFields(f, 'Service', 's'), 'one')['f:spec']['f:externalIPs'], {});
    const err = await applyError(f, service([port('a', 1)], { externalIPs: ['192.0.2.3'] }), 'two');
    t.deepEqual(
      err.details?.causes?.map((c) => [c.message, c.field]),
      [['conflict with "one"', '.spec.externalIPs']],
    );
    await apply(f, service([port('a', 1)], { externalIPs: ['192.0.2.3'] }), 'two', { force: true });
    const mf = await managedFields(f, 'Service', 's');
    t.deepEqual((await get(f, 'Service', 's')).spec.externalIPs, ['192.0.2.3']);
    t.is(entry(mf, 'one')['f:spec']['f:externalIPs'], undefined);
    t.deepEqual(entry(mf, 'two')['f:spec']['f:externalIPs'], {});
  }));

test('listType set: elements owned by value; dropping one removes it unless another applier has it', (t) =>
  withStore(async (f) => {
    const cm = (finalizers: string[]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', finalizers } });
    await apply(f, cm(['example.com/a', 'example.com/shared']), 'one');
    await apply(f, cm(['example.com/b', 'example.com/shared']), 'two');
    // upstream's merge order: the new element comes where the configuration has it, before the shared one.
    t.deepEqual((await get(f, 'ConfigMap', 'c')).metadata.finalizers, ['example.com/a', 'example.com/b', 'example.com/shared']);
    t.deepEqual(entry(await managedFields(f, 'ConfigMap', 'c'), 'one'), { 'f:metadata': { 'f:finalizers': { 'v:"example.com/a"': {}, 'v:"example.com/shared"': {} } } });
    await apply(f, cm([]), 'one');
    t.deepEqual((await get(f, 'ConfigMap', 'c')).metadata.finalizers, ['example.com/b', 'example.com/shared']);
  }));

test('structType atomic: a struct owned whole (env valueFrom.fieldRef), replaced whole', (t) =>
  withStore(async (f) => {
    const env = (fieldPath: string) => [{ name: 'a', image: 'i', env: [{ name: 'E', valueFrom: { fieldRef: { fieldPath } } }] }];
    await apply(f, pod(env('metadata.name')), 'one');
    const e = entry(await managedFields(f, 'Pod', 'p'), 'one')['f:spec']['f:containers']['k:{"name":"a"}']['f:env'];
    t.deepEqual(e, { 'k:{"name":"E"}': { '.': {}, 'f:name': {}, 'f:valueFrom': { 'f:fieldRef': {} } } });
    const err = await applyError(f, pod(env('metadata.namespace')), 'two');
    t.deepEqual(
      err.details?.causes?.map((c) => c.field),
      ['.spec.containers[name="a"].env[name="E"].valueFrom.fieldRef'],
    );
  }));

test('mapType atomic (nodeSelector) is one field; a granular map (labels) is owned key by key', (t) =>
  withStore(async (f) => {
    await apply(f, pod([{ name: 'a', image: 'i' }], { nodeSelector: { disk: 'ssd' } }, { labels: { app: 'web' } }), 'one');
    const one = entry(await managedFields(f, 'Pod', 'p'), 'one');
    t.deepEqual(one['f:spec']['f:nodeSelector'], {});
    t.deepEqual(one['f:metadata'], { 'f:labels': { 'f:app': {} } });
    // Another label key: no conflict. Another nodeSelector: the whole map conflicts.
    await apply(f, pod([{ name: 'a', image: 'i' }], {}, { labels: { team: 'x' } }), 'two');
    t.deepEqual((await get(f, 'Pod', 'p')).metadata.labels, { app: 'web', team: 'x' });
    const err = await applyError(f, pod([{ name: 'a', image: 'i' }], { nodeSelector: { zone: 'z' } }), 'three');
    t.deepEqual(
      err.details?.causes?.map((c) => c.field),
      ['.spec.nodeSelector'],
    );
  }));

test('a structure error in the applied configuration is a 400: a keyed element without its keys, a duplicated element', (t) =>
  withStore(async (f) => {
    const missing = await applyError(f, pod([{ image: 'i' }]), 'one');
    t.is(missing.code, 400);
    t.is(missing.message, 'failed to create typed patch object (/p; /v1, Kind=Pod): .spec.containers: element 0: associative list with keys has an element that omits all key fields ["name"] (and doesn\'t have default values for any key fields)');
    const twice = await applyError(f, pod([{ name: 'a', image: 'i' }, { name: 'a', image: 'j' }]), 'one');
    t.is(twice.code, 400);
    t.regex(twice.message, /\.spec\.containers: duplicate entries for key \[name="a"\]$/);
  }));
