import test from 'ava';
import { NamespaceLifecycle } from '../../../../apiserver/admission/namespace-lifecycle';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { builtinTypes } from '../../../../apiserver/registry/builtin';

const pods = builtinTypes.find((t) => t.resource === 'pods')!;
const namespaceType = builtinTypes.find((t) => t.resource === 'namespaces' && t.group === '')!;
const user = { username: 'u', groups: [] };
const namespaces: Record<string, KObject> = {
  live: { metadata: { name: 'live' } },
  going: { metadata: { name: 'going', deletionTimestamp: '2025-01-01T00:00:00Z' } },
};
const plugin = new NamespaceLifecycle({ cached: () => undefined, live: (name) => Promise.resolve(namespaces[name] ?? null), now: () => 0 });

test('a create in a terminating namespace is 403 with the NamespaceTerminating cause (kubectl drain reads it); a live one passes', async (t) => {
  await t.notThrowsAsync(plugin.validate({ operation: 'CREATE', type: pods, namespace: 'live', name: 'p', subresource: '', user, dryRun: false }));
  const err = await t.throwsAsync(plugin.validate({ operation: 'CREATE', type: pods, namespace: 'going', name: 'p', subresource: 'eviction', user, dryRun: false }));
  t.true(err instanceof ApiError);
  t.is((err as ApiError).code, 403);
  t.is(err.message, 'pods "p" is forbidden: unable to create new content in namespace going because it is being terminated');
  t.deepEqual((err as ApiError).details?.causes, [{ reason: 'NamespaceTerminating', message: 'namespace going is being terminated', field: 'metadata.namespace' }]);
  const missing = await t.throwsAsync(plugin.validate({ operation: 'CREATE', type: pods, namespace: 'nope', name: 'p', subresource: '', user, dryRun: false }));
  t.is((missing as ApiError).code, 404);
});

test('the informer cache answers; a namespace it does not have yet is looked up live; after a delete passes, a cache still showing it active is not trusted for 30 s', async (t) => {
  const cache: Record<string, KObject> = { live: { metadata: { name: 'live' } }, old: { metadata: { name: 'old' } } };
  const store: Record<string, KObject> = { live: { metadata: { name: 'live' } }, fresh: { metadata: { name: 'fresh' } }, old: { metadata: { name: 'old', deletionTimestamp: '2025-01-01T00:00:00Z' } } };
  let now = 1_000;
  const liveReads: string[] = [];
  const p = new NamespaceLifecycle({
    cached: (name) => cache[name],
    live: (name) => {
      liveReads.push(name);
      return Promise.resolve(store[name] ?? null);
    },
    now: () => now,
  });
  const create = (namespace: string) => p.validate({ operation: 'CREATE', type: pods, namespace, name: 'p', subresource: '', user, dryRun: false });
  await t.notThrowsAsync(create('live'));
  t.deepEqual(liveReads, []);
  await t.notThrowsAsync(create('fresh'));
  t.deepEqual(liveReads, ['fresh']);
  // The cache still shows "old" active: trusted until its delete passes admission here.
  await t.notThrowsAsync(create('old'));
  await p.validate({ operation: 'DELETE', type: namespaceType, namespace: '', name: 'old', subresource: '', user, dryRun: false });
  const refused = await t.throwsAsync(create('old'));
  t.is((refused as ApiError).code, 403);
  t.deepEqual(liveReads, ['fresh', 'old']);
  // After the TTL the cache is trusted again (upstream's too): by then it has caught up.
  now += 30_001;
  await t.notThrowsAsync(create('old'));
  t.deepEqual(liveReads, ['fresh', 'old']);
});
