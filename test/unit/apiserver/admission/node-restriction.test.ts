import test from 'ava';
import type { AdmissionAttributes, Operation } from '../../../../apiserver/admission/admission';
import { forbiddenLabelChanges, isForbiddenNodeLabel, NodeRestriction } from '../../../../apiserver/admission/node-restriction';
import type { KObject } from '../../../../apiserver/api/types';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';

const n1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const T = (group: string, resource: string, namespaced = true) => ({ group, resource, namespaced }) as ResourceType;
const pods = T('', 'pods');
const nodes = T('', 'nodes', false);
const leases = T('coordination.svc.io', 'leases');

const pod = (node: string, extra: Partial<KObject> = {}): KObject => ({ metadata: { name: 'p', namespace: 'ns', ...(extra.metadata ?? {}) }, spec: { nodeName: node, serviceAccountName: 'default', containers: [{ name: 'c' }], ...((extra.spec) ?? {}) } });
const N1_UID = 'uid-n1';
const owner = (o: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: N1_UID, controller: true, ...o });
/** A mirror pod as the agent makes it: the annotation, no service account, controlled by its Node. */
const mirror = (node: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): KObject => ({
  metadata: { name: 'p', namespace: 'ns', annotations: { 'svc.io/config.mirror': 'x' }, ownerReferences: [owner()], ...meta },
  spec: { nodeName: node, containers: [{ name: 'c' }], ...spec },
});
const node = (labels: Record<string, string> = {}, spec: Record<string, unknown> = {}): KObject => ({ metadata: { name: 'n1', labels }, spec });

function attrs(op: Operation, type: ResourceType, o: Partial<AdmissionAttributes>): AdmissionAttributes {
  return { operation: op, type, namespace: '', name: '', subresource: '', user: n1, dryRun: false, ...o };
}

const getNode = (name: string) => Promise.resolve(name === 'n1' ? { metadata: { name, uid: N1_UID } } : null);
const plugin = new NodeRestriction((_ns, name) => Promise.resolve(name === 'mine' ? pod('n1') : name === 'theirs' ? pod('n2') : null), getNode);

/** Status writes of a node to its own pod, node and claim: what NODE_STATUS_WRITES allows passes, the rest names the field. */
function statusCases(): [string, AdmissionAttributes, string | null][] {
  const mine = (meta: Record<string, unknown> = {}, status: Record<string, unknown> = { phase: 'Pending' }): KObject => ({
    metadata: { name: 'p', namespace: 'ns', labels: { app: 'web' }, annotations: { a: '1' }, ...meta },
    spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
    status,
  });
  const podStatus = (object: KObject) => attrs('UPDATE', pods, { namespace: 'ns', name: 'p', subresource: 'status', object, oldObject: mine() });
  const selfNode = (meta: Record<string, unknown> = {}, status: Record<string, unknown> = {}): KObject => ({ metadata: { name: 'n1', labels: { 'svc.io/os': 'linux' }, ...meta }, spec: {}, status });
  const nodeStatus = (object: KObject) => attrs('UPDATE', nodes, { name: 'n1', subresource: 'status', object, oldObject: selfNode() });
  const claims = T('', 'persistentvolumeclaims');
  const claim = (meta: Record<string, unknown> = {}, status: Record<string, unknown> = { phase: 'Bound' }): KObject => ({ metadata: { name: 'c', namespace: 'ns', ...meta }, spec: { volumeName: 'pv' }, status });
  const claimStatus = (object: KObject) => attrs('UPDATE', claims, { namespace: 'ns', name: 'c', subresource: 'status', object, oldObject: claim() });
  return [
    ['pods/status: the status changes', podStatus(mine({}, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] })), null],
    ['pods/status: managedFields and generation are the store\'s', podStatus(mine({ managedFields: [{ manager: 'x' }], generation: 9 })), null],
    ['pods/status: a label added', podStatus(mine({ labels: { app: 'web', 'team': 'other' } })), 'node "n1" cannot update metadata.labels through pods/status (a node may change only status, except status.resourceClaimStatuses)'],
    ['pods/status: labels removed', podStatus(mine({ labels: undefined })), 'cannot update metadata.labels through pods/status'],
    ['pods/status: an annotation changed', podStatus(mine({ annotations: { a: '2' } })), 'cannot update metadata.annotations through pods/status'],
    ['pods/status: finalizers', podStatus(mine({ finalizers: ['x/y'] })), 'cannot update metadata.finalizers through pods/status'],
    ['pods/status: owner references', podStatus(mine({ ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'u' }] })), 'cannot update metadata.ownerReferences through pods/status'],
    ['pods/status: resource claim statuses', podStatus(mine({}, { phase: 'Pending', resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'other' }] })), 'cannot update status.resourceClaimStatuses through pods/status'],
    ['pods/status: the spec', podStatus({ ...mine(), spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'evil' }] } }), 'cannot update spec through pods/status'],
    ['nodes/status: status, annotations and kubelet labels change', nodeStatus(selfNode({ labels: { 'svc.io/os': 'linux', 'svc.io/arch': 'arm64' }, annotations: { x: 'y' } }, { conditions: [] })), null],
    ['nodes/status: a restricted label', nodeStatus(selfNode({ labels: { 'node-restriction.svc.io/x': 'y' } })), 'is not allowed to modify labels: node-restriction.svc.io/x'],
    ['nodes/status: finalizers', nodeStatus(selfNode({ finalizers: ['x/y'] })), 'cannot update metadata.finalizers through nodes/status'],
    ['nodes/status: the spec', nodeStatus({ ...selfNode(), spec: { unschedulable: true } }), 'cannot update spec through nodes/status'],
    ['persistentvolumeclaims/status: capacity and conditions', claimStatus(claim({}, { phase: 'Bound', capacity: { storage: '2Gi' }, conditions: [{ type: 'Resizing', status: 'True' }] })), null],
    ['persistentvolumeclaims/status: the phase', claimStatus(claim({}, { phase: 'Lost' })), 'cannot update status.phase through persistentvolumeclaims/status'],
    ['persistentvolumeclaims/status: a label', claimStatus(claim({ labels: { a: 'b' } })), 'cannot update metadata.labels through persistentvolumeclaims/status'],
  ];
}

const cases: [string, AdmissionAttributes, string | null][] = [
  ['mirror pod bound to itself', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1') }), null],
  ['pod without the mirror annotation', attrs('CREATE', pods, { namespace: 'ns', object: pod('n1') }), 'can only create mirror pods'],
  ['mirror pod bound elsewhere', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n2') }), 'spec.nodeName set to itself'],
  ['mirror pod with a secret', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { volumes: [{ name: 'v', secret: { secretName: 's' } }] }) }), 'reference secrets'],
  ['mirror pod with a service account', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { serviceAccountName: 'builder' }) }), 'reference a service account'],
  ['mirror pod owned by another node', attrs('CREATE', pods, { namespace: 'ns', object: { ...mirror('n1'), metadata: { name: 'p', annotations: { 'svc.io/config.mirror': 'x' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n2', uid: 'u', controller: true }] } } }), 'owner reference'],
  // Issue 16, defect 4: a mirror pod may not give the node a service account or anything else to read.
  ['mirror pod with the default service account', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { serviceAccountName: 'default' }) }), 'can not create pods that reference a service account'],
  ['mirror pod with an empty mirror annotation is a mirror pod', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', {}, { annotations: { 'svc.io/config.mirror': '' } }) }), null],
  ['mirror pod without an owner reference', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', {}, { ownerReferences: [] }) }), 'can only create pods with an owner reference set to itself'],
  ['mirror pod with two owner references', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', {}, { ownerReferences: [owner(), owner()] }) }), 'a single owner reference'],
  ['mirror pod owned by a Node of another apiVersion', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', {}, { ownerReferences: [owner({ apiVersion: 'v2' })] }) }), 'an owner reference set to itself'],
  ['mirror pod owned by another kind', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', {}, { ownerReferences: [owner({ kind: 'Pod' })] }) }), 'an owner reference set to itself'],
  ['mirror pod with a wrong Node uid', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', {}, { ownerReferences: [owner({ uid: 'wrong-uid' })] }) }), `node n1 UID mismatch: expected ${N1_UID} (the Node's) got wrong-uid`],
  ['mirror pod with no Node uid', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', {}, { ownerReferences: [owner({ uid: undefined })] }) }), 'UID mismatch'],
  ['mirror pod with a non-controller owner reference', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', {}, { ownerReferences: [owner({ controller: false })] }) }), 'a controller owner reference'],
  ['mirror pod blocking owner deletion', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', {}, { ownerReferences: [owner({ blockOwnerDeletion: true })] }) }), 'must not set blockOwnerDeletion'],
  ['mirror pod with image pull secrets', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { imagePullSecrets: [{ name: 's' }] }) }), 'reference secrets'],
  ['mirror pod with a secret in envFrom', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { containers: [{ name: 'c', envFrom: [{ secretRef: { name: 's' } }] }] }) }), 'reference secrets'],
  ['mirror pod with a projected secret', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { volumes: [{ name: 'v', projected: { sources: [{ secret: { name: 's' } }] } }] }) }), 'reference secrets'],
  ['mirror pod with a config map env', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { containers: [{ name: 'c', env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }] }] }) }), 'reference configmaps'],
  ['mirror pod with a config map in an init container', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { initContainers: [{ name: 'i', envFrom: [{ configMapRef: { name: 'cm' } }] }] }) }), 'reference configmaps'],
  ['mirror pod with a projected config map', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { volumes: [{ name: 'v', projected: { sources: [{ configMap: { name: 'cm' } }] } }] }) }), 'reference configmaps'],
  ['mirror pod with a cluster trust bundle', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { volumes: [{ name: 'v', projected: { sources: [{ clusterTrustBundle: { name: 'b', path: 'p' } }] } }] }) }), 'reference clustertrustbundles'],
  ['mirror pod with a claim', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] }) }), 'reference persistentvolumeclaims'],
  ['mirror pod with a generic ephemeral volume', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { volumes: [{ name: 'v', ephemeral: { volumeClaimTemplate: {} } }] }) }), 'reference persistentvolumeclaims'],
  ['mirror pod with a resource claim', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { resourceClaims: [{ name: 'gpu' }] }) }), 'reference resourceclaims'],
  ['mirror pod with host paths and empty dirs only', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { volumes: [{ name: 'a', hostPath: { path: '/x' } }, { name: 'b', emptyDir: {} }, { name: 'd', projected: { sources: [{ downwardAPI: { items: [] } }] } }] }) }), null],
  ['delete own pod', attrs('DELETE', pods, { namespace: 'ns', name: 'p', oldObject: pod('n1') }), null],
  ["delete another node's pod", attrs('DELETE', pods, { namespace: 'ns', name: 'p', oldObject: pod('n2') }), 'can only delete pods'],
  ['update a pod', attrs('UPDATE', pods, { namespace: 'ns', name: 'p', object: pod('n1'), oldObject: pod('n1') }), 'unexpected operation'],
  ['status of own pod', attrs('UPDATE', pods, { namespace: 'ns', name: 'p', subresource: 'status', object: pod('n1'), oldObject: pod('n1') }), null],
  ["status of another node's pod", attrs('UPDATE', pods, { namespace: 'ns', name: 'p', subresource: 'status', object: pod('n2'), oldObject: pod('n2') }), 'can only update pod status'],
  // Issue 16, defect 5: through pods/status a node changes the status only (NODE_STATUS_WRITES).
  ...statusCases(),
  ['evict own pod', attrs('CREATE', pods, { namespace: 'ns', name: 'mine', subresource: 'eviction', object: { metadata: {} } }), null],
  ["evict another node's pod", attrs('CREATE', pods, { namespace: 'ns', name: 'theirs', subresource: 'eviction', object: { metadata: {} } }), 'can only evict'],
  ['other pod sub-resource', attrs('CREATE', pods, { namespace: 'ns', name: 'p', subresource: 'exec' }), 'unexpected subresource'],
  ['register own node', attrs('CREATE', nodes, { object: node({ 'svc.io/hostname': 'n1', 'node.svc.io/pool': 'a', 'svc-node.svc.io/x': 'y', 'example.com/team': 'z' }) }), null],
  ['register another node', attrs('CREATE', nodes, { object: { metadata: { name: 'n2' } } }), 'not allowed to modify node "n2"'],
  ['register with a restricted label', attrs('CREATE', nodes, { object: node({ 'node-restriction.svc.io/trusted': 'true' }) }), 'not allowed to set the following labels: node-restriction.svc.io/trusted'],
  ['register with an svc.io label not the kubelet\'s', attrs('CREATE', nodes, { object: node({ 'node-role.svc.io/control-plane': '' }) }), 'node-role.svc.io/control-plane'],
  ['update own node status', attrs('UPDATE', nodes, { name: 'n1', subresource: 'status', object: node(), oldObject: node() }), null],
  ['patch another node', attrs('UPDATE', nodes, { name: 'n2', object: { metadata: { name: 'n2' } }, oldObject: { metadata: { name: 'n2' } } }), 'not allowed to modify node "n2"'],
  ['change own taints', attrs('UPDATE', nodes, { name: 'n1', object: node({}, { taints: [] }), oldObject: node({}, { taints: [{ key: 'k', effect: 'NoSchedule' }] }) }), 'modify taints'],
  ['change pod CIDRs', attrs('UPDATE', nodes, { name: 'n1', object: node({}, { podCIDRs: ['10.0.0.0/24'] }), oldObject: node() }), 'pod CIDRs'],
  ['remove a restricted label', attrs('UPDATE', nodes, { name: 'n1', object: node(), oldObject: node({ 'node-restriction.svc.io/x': 'y' }) }), 'modify labels: node-restriction.svc.io/x'],
  ['keep an existing restricted label', attrs('UPDATE', nodes, { name: 'n1', object: node({ 'node-restriction.svc.io/x': 'y' }), oldObject: node({ 'node-restriction.svc.io/x': 'y' }) }), null],
  ['delete own node', attrs('DELETE', nodes, { name: 'n1', oldObject: node() }), null],
  ['create own lease', attrs('CREATE', leases, { namespace: 'svc-node-lease', object: { metadata: { name: 'n1' } } }), null],
  ["create another node's lease", attrs('CREATE', leases, { namespace: 'svc-node-lease', object: { metadata: { name: 'n2' } } }), 'same name'],
  ['update own lease', attrs('UPDATE', leases, { namespace: 'svc-node-lease', name: 'n1', object: { metadata: { name: 'n1' } } }), null],
  ['lease elsewhere', attrs('CREATE', leases, { namespace: 'default', object: { metadata: { name: 'n1' } } }), 'svc-node-lease'],
  ['other resources pass', attrs('CREATE', T('', 'events'), { namespace: 'ns', object: { metadata: { name: 'e' } } }), null],
  ['not a node: untouched', { ...attrs('CREATE', pods, { namespace: 'ns', object: pod('n2') }), user: { username: 'alice', groups: [] } }, null],
  ['system:nodes without a name', { ...attrs('CREATE', pods, { namespace: 'ns', object: pod('n2') }), user: { username: 'system:node:', groups: ['system:nodes'] } }, 'could not determine node'],
];

for (const [name, a, want] of cases) {
  test(`NodeRestriction: ${name}`, async (t) => {
    if (want === null) {
      await t.notThrowsAsync(plugin.validate(a));
    } else {
      const err = await t.throwsAsync(plugin.validate(a));
      t.regex(err.message, new RegExp(want.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      t.is((err as { code?: number }).code, 403);
    }
  });
}

test('label rule mirrors upstream', (t) => {
  t.false(isForbiddenNodeLabel('svc.io/hostname'));
  t.false(isForbiddenNodeLabel('topology.svc.io/zone'));
  t.false(isForbiddenNodeLabel('foo.node.svc.io/bar'));
  t.false(isForbiddenNodeLabel('kubelet.svc.io/x'));
  t.false(isForbiddenNodeLabel('plain'));
  t.false(isForbiddenNodeLabel('example.com/x'));
  t.true(isForbiddenNodeLabel('svc.io/other'));
  t.true(isForbiddenNodeLabel('x.svc.io/other'));
  t.true(isForbiddenNodeLabel('node-restriction.svc.io/a'));
  t.true(isForbiddenNodeLabel('team.node-restriction.svc.io/a'));
  t.deepEqual(forbiddenLabelChanges({ 'svc.io/a': '1', 'svc.io/os': 'linux' }, { 'svc.io/a': '1', 'svc.io/b': '2' }), ['svc.io/b']);
});

test('a mirror pod of a node that is not registered: 404 for the Node (upstream returns the lookup\'s NotFound)', async (t) => {
  const unregistered = new NodeRestriction(() => Promise.resolve(null), () => Promise.resolve(null));
  const err = await t.throwsAsync(unregistered.validate(attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1') })));
  t.is((err as { code?: number }).code, 404);
  t.regex(err.message, /nodes "n1" not found/);
});

test('a node asks for service account tokens only bound to a pod on it, by name and uid (upstream admitServiceAccount)', async (t) => {
  const sas = T('', 'serviceaccounts');
  const withUid = (nodeName: string, uid: string): KObject => ({ ...pod(nodeName), metadata: { name: 'x', namespace: 'ns', uid } });
  const mirrored: KObject = { ...mirror('n1'), metadata: { ...mirror('n1').metadata, name: 'static-web', uid: 'u-mirror' } };
  const byName: Record<string, KObject> = { mine: withUid('n1', 'u-mine'), theirs: withUid('n2', 'u-theirs'), 'static-web': mirrored };
  const np = new NodeRestriction((_ns, name) => Promise.resolve(byName[name] ?? null), getNode);
  const tr = (ref?: Record<string, unknown>): AdmissionAttributes =>
    attrs('CREATE', sas, { namespace: 'ns', name: 'default', subresource: 'token', object: { metadata: { name: 'default' }, spec: { audiences: [], ...(ref ? { boundObjectRef: ref } : {}) } } });
  await t.notThrowsAsync(np.validate(tr({ apiVersion: 'v1', kind: 'Pod', name: 'mine', uid: 'u-mine' })));
  const refused: [AdmissionAttributes, RegExp][] = [
    [tr(), /node requested token not bound to a pod/],
    [tr({ kind: 'Secret', name: 'mine', uid: 'u-mine' }), /not bound to a pod/],
    [tr({ apiVersion: 'v2', kind: 'Pod', name: 'mine', uid: 'u-mine' }), /not bound to a pod/],
    [tr({ kind: 'Pod', name: 'mine' }), /pod binding without a uid/],
    [tr({ kind: 'Pod', name: 'mine', uid: 'u-old' }), /does not match the UID in record/],
    [tr({ kind: 'Pod', name: 'theirs', uid: 'u-theirs' }), /bound to a pod scheduled on a different node/],
    // Issue 16, defect 4: never a token bound to a mirror pod (whatever account it names).
    [tr({ apiVersion: 'v1', kind: 'Pod', name: 'static-web', uid: 'u-mirror' }), /node requested token bound to mirror pod "static-web"/],
  ];
  for (const [a, re] of refused) {
    const err = await t.throwsAsync(np.validate(a));
    t.regex(err.message, re);
    t.is((err as { code?: number }).code, 403);
  }
  const gone = await t.throwsAsync(np.validate(tr({ kind: 'Pod', name: 'ghost', uid: 'u' })));
  t.is((gone as { code?: number }).code, 404);
  // Other users are not limited; other service account writes are not this plugin's business.
  await t.notThrowsAsync(np.validate({ ...tr(), user: { username: 'alice', groups: [] } }));
  await t.notThrowsAsync(np.validate(attrs('UPDATE', sas, { namespace: 'ns', name: 'default', object: { metadata: {} } })));
});
