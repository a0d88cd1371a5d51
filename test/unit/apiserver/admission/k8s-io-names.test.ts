import test from 'ava';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { DefaultTolerationSeconds } from '../../../../apiserver/admission/default-toleration-seconds';
import { forbiddenLabelChanges, isForbiddenNodeLabel, NodeRestriction } from '../../../../apiserver/admission/node-restriction';
import type { KObject } from '../../../../apiserver/api/types';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { podType } from '../../../../apiserver/registry/types/pods';

// Issue 17, item 3: admission reads upstream's kubernetes.io spellings as svc.io's.

test('NodeRestriction: a node may set the kubelet labels of both spellings, and no other kubernetes.io or k8s.io label', (t) => {
  for (const k of ['kubernetes.io/hostname', 'kubernetes.io/os', 'kubernetes.io/arch', 'node.kubernetes.io/instance-type', 'topology.kubernetes.io/zone', 'node.kubernetes.io/exclude-from-external-load-balancers']) {
    t.false(isForbiddenNodeLabel(k), k);
  }
  for (const k of ['kubernetes.io/custom', 'node-role.kubernetes.io/control-plane', 'node-restriction.kubernetes.io/pool', 'k8s.io/x']) {
    t.true(isForbiddenNodeLabel(k), k);
  }
  t.deepEqual(forbiddenLabelChanges({ 'kubernetes.io/os': 'linux', 'node-role.kubernetes.io/worker': '' }, {}), ['node-role.kubernetes.io/worker']);
});

test('NodeRestriction: a node updating its own Node with both label families passes; a reserved kubernetes.io label is refused', async (t) => {
  const n1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  const nodes = { group: '', resource: 'nodes', namespaced: false } as ResourceType;
  const plugin = new NodeRestriction(() => Promise.resolve(null), () => Promise.resolve({ metadata: { name: 'n1', uid: 'u' } }));
  const node = (labels: Record<string, string>): KObject => ({ metadata: { name: 'n1', labels }, spec: {} });
  const update = (labels: Record<string, string>): AdmissionAttributes => ({ operation: 'UPDATE', type: nodes, namespace: '', name: 'n1', subresource: '', user: n1, dryRun: false, object: node(labels), oldObject: node({ 'svc.io/os': 'linux' }) });
  await t.notThrowsAsync(plugin.validate(update({ 'svc.io/os': 'linux', 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': 'n1', 'kubernetes.io/arch': 'amd64' })));
  const err = await t.throwsAsync(plugin.validate(update({ 'svc.io/os': 'linux', 'node-role.kubernetes.io/control-plane': '' })));
  t.regex(err.message, /node-role\.kubernetes\.io\/control-plane/);
});

function podCreate(tolerations: unknown[]): AdmissionAttributes {
  const object: KObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [], tolerations } };
  return { operation: 'CREATE', type: podType, namespace: 'ns', name: 'p', subresource: '', object, user: { username: 'u', groups: [] }, dryRun: false };
}

test('DefaultTolerationSeconds: a pod tolerating node.kubernetes.io/not-ready (as upstream manifests write it) gets no second not-ready toleration', async (t) => {
  const own = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
  const a = podCreate([own]);
  await new DefaultTolerationSeconds().mutate(a);
  t.deepEqual((a.object!.spec as { tolerations: unknown[] }).tolerations, [own, { key: 'node.svc.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]);
  const both = podCreate([own, { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 20 }]);
  await new DefaultTolerationSeconds().mutate(both);
  t.is((both.object!.spec as { tolerations: unknown[] }).tolerations.length, 2);
});
