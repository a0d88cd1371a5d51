/**
 * A real ObjectStore over SqliteStorage in a temp dir with a running WatchCache, the built-in
 * types, an admission chain whose plugins the test sets after building them, and
 * buildAuthorizers running over it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { AdmissionChain, type AdmissionAttributes, type AdmissionPlugin } from '../../../../apiserver/admission/admission';
import type { AuthorizationOptions } from '../../../../apiserver/authz/authorization-options';
import { buildAuthorizers, type Authorization } from '../../../../apiserver/wiring/authorization';
import type { UserInfo } from '../../../../apiserver/api/user';
import { makeBuiltinTypes, ResourceRegistry } from '../../../../apiserver/registry/builtin';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { ObjectStore, type WriteContext } from '../../../../apiserver/store/object-store';
import { WatchCache } from '../../../../apiserver/store/watch-cache';
import { eventually } from './helpers';

export interface AuthzFixture {
  store: ObjectStore;
  cache: WatchCache;
  registry: ResourceRegistry;
  authz: Authorization;
  dir: string;
  plugins: AdmissionPlugin[];
  type(group: string, resource: string, version?: string): ResourceType;
  as(user: UserInfo, subresource?: string): WriteContext;
  ready(): Promise<void>;
  close(): Promise<void>;
}

export const admin: WriteContext = { user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] }, dryRun: false, subresource: '' };

export async function openAuthzFixture(opts: AuthorizationOptions = { modes: ['Node', 'RBAC'] }, extra: Partial<Parameters<typeof buildAuthorizers>[1]> = {}): Promise<AuthzFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-h10-'));
  const storage = SqliteStorage.open(join(dir, 'state.db'), { synchronous: 'NORMAL' });
  const cache = new WatchCache(storage, { retainMs: 300_000, now: Date.now });
  const plugins: AdmissionPlugin[] = [];
  const admission = new AdmissionChain([{ name: 'test-plugins', validate: async (a: AdmissionAttributes) => { for (const p of plugins) await p.validate?.(a); } }]);
  const store = new ObjectStore(storage, cache, admission, { now: () => new Date(), rvWaitMs: 3000 });
  const registry = new ResourceRegistry();
  for (const t of makeBuiltinTypes()) registry.register(t);
  const log = pino({ level: 'silent' });
  const authz = buildAuthorizers(opts, { store, cache, registry, log, ...extra });
  plugins.push(authz.escalation);
  const ac = new AbortController();
  const cacheRun = cache.run(ac.signal);
  await cache.whenReady();
  for (const ns of ['default', 'svc-system', 'svc-public', 'svc-node-lease']) {
    await store.create(registry.lookup('', 'v1', 'namespaces')!, '', { metadata: { name: ns } }, admin);
  }
  const running = Promise.all([authz.run(ac.signal), authz.aggregation.run(ac.signal)]);
  return {
    store,
    cache,
    registry,
    authz,
    dir,
    plugins,
    type(group, resource, version = 'v1') {
      const t = registry.lookup(group, version, resource);
      if (!t) throw new Error(`no type ${group}/${version}/${resource}`);
      return t;
    },
    as(user, subresource = '') {
      return { user, dryRun: false, subresource };
    },
    async ready() {
      await eventually(async () => {
        for (const c of authz.checks) if ((await c.check()) !== undefined) return false;
        return true;
      }, 'authorization readiness', 10_000);
    },
    async close() {
      ac.abort();
      await running.catch(() => undefined);
      await cacheRun.catch(() => undefined);
      await authz.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
