import test from 'ava';
import { NamespaceLifecycle } from '../../../../apiserver/admission/namespace-lifecycle';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { builtinTypes } from '../../../../apiserver/registry/builtin';

const pods = builtinTypes.find((t) => t.resource === 'pods')!;
const user = { username: 'u', groups: [] };
const namespaces: Record<string, KObject> = {
  live: { metadata: { name: 'live' } },
  going: { metadata: { name: 'going', deletionTimestamp: '2025-01-01T00:00:00Z' } },
};
const plugin = new NamespaceLifecycle((name) => Promise.resolve(namespaces[name] ?? null));

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
