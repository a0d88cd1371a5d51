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
const mirror = (node: string, spec: Record<string, unknown> = {}): KObject => pod(node, { metadata: { name: 'p', namespace: 'ns', annotations: { 'svc.io/config.mirror': 'x' } }, spec });
const node = (labels: Record<string, string> = {}, spec: Record<string, unknown> = {}): KObject => ({ metadata: { name: 'n1', labels }, spec });

function attrs(op: Operation, type: ResourceType, o: Partial<AdmissionAttributes>): AdmissionAttributes {
  return { operation: op, type, namespace: '', name: '', subresource: '', user: n1, dryRun: false, ...o };
}

const plugin = new NodeRestriction((_ns, name) => Promise.resolve(name === 'mine' ? pod('n1') : name === 'theirs' ? pod('n2') : null));

const cases: [string, AdmissionAttributes, string | null][] = [
  ['mirror pod bound to itself', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1') }), null],
  ['pod without the mirror annotation', attrs('CREATE', pods, { namespace: 'ns', object: pod('n1') }), 'can only create mirror pods'],
  ['mirror pod bound elsewhere', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n2') }), 'spec.nodeName set to itself'],
  ['mirror pod with a secret', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { volumes: [{ name: 'v', secret: { secretName: 's' } }] }) }), 'reference secrets'],
  ['mirror pod with a service account', attrs('CREATE', pods, { namespace: 'ns', object: mirror('n1', { serviceAccountName: 'builder' }) }), 'reference a service account'],
  ['mirror pod owned by another node', attrs('CREATE', pods, { namespace: 'ns', object: { ...mirror('n1'), metadata: { name: 'p', annotations: { 'svc.io/config.mirror': 'x' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n2', uid: 'u', controller: true }] } } }), 'owner reference'],
  ['delete own pod', attrs('DELETE', pods, { namespace: 'ns', name: 'p', oldObject: pod('n1') }), null],
  ["delete another node's pod", attrs('DELETE', pods, { namespace: 'ns', name: 'p', oldObject: pod('n2') }), 'can only delete pods'],
  ['update a pod', attrs('UPDATE', pods, { namespace: 'ns', name: 'p', object: pod('n1'), oldObject: pod('n1') }), 'unexpected operation'],
  ['status of own pod', attrs('UPDATE', pods, { namespace: 'ns', name: 'p', subresource: 'status', object: pod('n1'), oldObject: pod('n1') }), null],
  ["status of another node's pod", attrs('UPDATE', pods, { namespace: 'ns', name: 'p', subresource: 'status', object: pod('n2'), oldObject: pod('n2') }), 'can only update pod status'],
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

test('a node asks for service account tokens only bound to a pod on it, by name and uid (upstream admitServiceAccount)', async (t) => {
  const sas = T('', 'serviceaccounts');
  const withUid = (nodeName: string, uid: string): KObject => ({ ...pod(nodeName), metadata: { name: 'x', namespace: 'ns', uid } });
  const np = new NodeRestriction((_ns, name) => Promise.resolve(name === 'mine' ? withUid('n1', 'u-mine') : name === 'theirs' ? withUid('n2', 'u-theirs') : null));
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
