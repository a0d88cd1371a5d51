/**
 * The in-process driver of the apply conformance suite: a real ObjectStore (store fixture) and
 * the operations a client has — apply (ObjectStore.apply, as the PATCH handler calls it), an
 * update (a merge patch through ObjectStore.update, as the patch handler computes it) — plus the
 * managedFields of the stored object, for comparing with what upstream writes for the same
 * sequence. The store clock starts at 2025-03-01T12:00:00Z; `tick` moves it a minute.
 */
import { parse as parseYaml } from 'yaml';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { applyMergePatch } from '../../../../apiserver/patch/merge-patch';
import { ctx, openStore, type StoreFixture } from '../store/fixture';

export { openStore, type StoreFixture };

export const NS = 'default';

/** Times the store writes: T0, then each tick() a minute later. */
export const T = (minutes: number): string => new Date(Date.parse('2025-03-01T12:00:00Z') + minutes * 60_000).toISOString().replace('.000Z', 'Z');

export async function tick(f: StoreFixture): Promise<void> {
  await f.clock.advance(60_000);
}

const resourceOf: Record<string, string> = { ConfigMap: 'configmaps', Pod: 'pods', Service: 'services', Namespace: 'namespaces', Secret: 'secrets', Node: 'nodes' };

/** Server-side apply of a YAML (or object) configuration by manager; the stored object. */
export async function apply(f: StoreFixture, config: string | KObject, manager: string, opts: { force?: boolean; subresource?: string; dryRun?: boolean } = {}): Promise<any> {
  const c = (typeof config === 'string' ? parseYaml(config) : structuredClone(config)) as KObject;
  const t = f.type(resourceOf[c.kind!]);
  const ns = t.namespaced ? NS : '';
  const { object } = await f.store.apply(t, ns, c.metadata.name!, c, ctx({ fieldManager: manager, subresource: opts.subresource ?? '', dryRun: opts.dryRun ?? false }), { force: opts.force ?? false });
  return object;
}

/** The 409 (or other ApiError) an apply fails with. */
export async function applyError(f: StoreFixture, config: string | KObject, manager: string, opts: { force?: boolean; subresource?: string } = {}): Promise<ApiError> {
  try {
    await apply(f, config, manager, opts);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('the apply succeeded');
}

/** A non-apply write: a JSON merge patch of kind/name by manager (an Update entry). */
export async function mergePatch(f: StoreFixture, kind: string, name: string, patch: unknown, manager: string, subresource = ''): Promise<any> {
  const t = f.type(resourceOf[kind]);
  const ns = t.namespaced ? NS : '';
  const { object } = await f.store.update(t, ns, name, (cur) => applyMergePatch(cur, patch) as KObject, ctx({ fieldManager: manager, subresource }));
  return object;
}

export async function get(f: StoreFixture, kind: string, name: string): Promise<any> {
  const t = f.type(resourceOf[kind]);
  return f.store.get(t, t.namespaced ? NS : '', name);
}

/** The stored managedFields (undefined when there are none). */
export async function managedFields(f: StoreFixture, kind: string, name: string): Promise<any> {
  return (await get(f, kind, name)).metadata.managedFields;
}

/** Runs body with a fresh store, closing it after. */
export async function withStore(body: (f: StoreFixture) => Promise<void>): Promise<void> {
  const f = await openStore();
  try {
    await body(f);
  } finally {
    await f.close();
  }
}
