import test from 'ava';
import type { AdmissionAttributes, Operation } from '../../../../apiserver/admission/admission';
import { NodeRestriction } from '../../../../apiserver/admission/node-restriction';
import type { KObject } from '../../../../apiserver/api/types';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';

const n1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const pvT = { group: '', resource: 'persistentvolumes', namespaced: false } as ResourceType;
const plugin = new NodeRestriction(() => Promise.resolve(null), () => Promise.resolve(null));

const volume = (node: string, meta: Partial<KObject['metadata']> = {}, spec: Record<string, unknown> = { hostPath: { path: '/v/x' } }): KObject => ({
  metadata: { name: 'pvc-1', labels: { 'local-path.svc.io/node': node }, finalizers: ['svc.io/local-path-cleanup', 'other/keep'], deletionTimestamp: '2025-01-01T00:00:00Z', ...meta },
  spec,
  status: { phase: 'Released' },
});
const attrs = (op: Operation, object: KObject | undefined, oldObject: KObject | undefined, subresource = ''): AdmissionAttributes => ({ operation: op, type: pvT, namespace: '', name: 'pvc-1', subresource, user: n1, dryRun: false, object, oldObject });

test('a node may take the cleanup finalizer off its own local-path volume, and nothing else', async (t) => {
  const old = volume('n1');
  await t.notThrowsAsync(plugin.validate(attrs('UPDATE', volume('n1', { finalizers: ['other/keep'], resourceVersion: '9', managedFields: [] }), old)));
  const refused = async (a: AdmissionAttributes) => {
    const err = await t.throwsAsync(plugin.validate(a));
    t.regex(err.message, /node "n1" may only remove the svc.io\/local-path-cleanup finalizer of local-path volumes on it/);
  };
  await refused(attrs('UPDATE', volume('n2', { finalizers: ['other/keep'] }), volume('n2')));
  await refused(attrs('UPDATE', volume('n1', { finalizers: [] }), old));
  await refused(attrs('UPDATE', volume('n1', { finalizers: ['other/keep'] }, { hostPath: { path: '/etc' } }), old));
  await refused(attrs('UPDATE', volume('n1', { finalizers: ['svc.io/local-path-cleanup', 'other/keep', 'new/one'] }), old));
  await refused(attrs('UPDATE', volume('n1', { finalizers: ['other/keep'], labels: {} }), old));
  await refused(attrs('CREATE', volume('n1'), undefined));
  await refused(attrs('DELETE', undefined, old));
  await refused(attrs('UPDATE', volume('n1'), old, 'status'));
});

test('other users are not limited', async (t) => {
  await t.notThrowsAsync(plugin.validate({ ...attrs('UPDATE', volume('n2', { finalizers: [] }), volume('n2')), user: { username: 'alice', groups: [] } }));
});
