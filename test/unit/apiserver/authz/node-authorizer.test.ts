import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import type { SelectorAttributes } from '../../../../apiserver/authz/attributes';
import { NodeAuthorizer } from '../../../../apiserver/authz/node-authorizer';
import { NodeGraph } from '../../../../apiserver/authz/node-graph';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { nonRes, res, user } from './helpers';

const podsT = { group: '', resource: 'pods' } as ResourceType;
const pvcT = { group: '', resource: 'persistentvolumeclaims' } as ResourceType;

function pod(name: string, node: string, spec: Record<string, unknown> = {}): KObject {
  return { metadata: { name, namespace: 'ns' }, spec: { nodeName: node, containers: [{ name: 'c' }], ...spec } };
}

function graph(): NodeGraph {
  const g = new NodeGraph();
  g.upsert(
    podsT,
    pod('web', 'n1', {
      serviceAccountName: 'web-sa',
      imagePullSecrets: [{ name: 'pull' }],
      containers: [{ name: 'c', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }], envFrom: [{ configMapRef: { name: 'env-cm' } }] }],
      volumes: [
        { name: 'v1', secret: { secretName: 'vol-secret' } },
        { name: 'v2', configMap: { name: 'vol-cm' } },
        { name: 'v3', persistentVolumeClaim: { claimName: 'data' } },
        { name: 'v4', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } },
      ],
    }),
  );
  g.upsert(podsT, pod('db', 'n2', { volumes: [{ name: 'v', secret: { secretName: 'db-secret' } }] }));
  g.upsert(podsT, pod('pending', '', { volumes: [{ name: 'v', secret: { secretName: 'pending-secret' } }] }));
  g.upsert(pvcT, { metadata: { name: 'data', namespace: 'ns' }, spec: { volumeName: 'pv-1' } });
  g.upsert(pvcT, { metadata: { name: 'other', namespace: 'ns' }, spec: { volumeName: 'pv-2' } });
  return g;
}

const n1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const ns = { namespace: 'ns' };
const nodeList = (verb: string, resource: string, o: Record<string, string>, field?: [string, string]): SelectorAttributes => {
  const a: SelectorAttributes = { user: n1, info: res(verb, resource, o) };
  if (field) a.fieldSelector = [{ key: field[0], operator: 'In', values: [field[1]] }];
  return a;
};

const cases: [string, SelectorAttributes, 'allow' | 'no-opinion'][] = [
  ['secret of a bound pod (volume)', { user: n1, info: res('get', 'secrets', { ...ns, name: 'vol-secret' }) }, 'allow'],
  ['secret of a bound pod (env)', { user: n1, info: res('get', 'secrets', { ...ns, name: 'env-secret' }) }, 'allow'],
  ['secret of a bound pod (imagePullSecrets)', { user: n1, info: res('get', 'secrets', { ...ns, name: 'pull' }) }, 'allow'],
  ['secret of a bound pod (projected)', { user: n1, info: res('watch', 'secrets', { ...ns, name: 'proj-secret' }) }, 'allow'],
  ["another node's secret", { user: n1, info: res('get', 'secrets', { ...ns, name: 'db-secret' }) }, 'no-opinion'],
  ['secret of an unscheduled pod', { user: n1, info: res('get', 'secrets', { ...ns, name: 'pending-secret' }) }, 'no-opinion'],
  ['same secret name in another namespace', { user: n1, info: res('get', 'secrets', { namespace: 'x', name: 'vol-secret' }) }, 'no-opinion'],
  ['secret list without a name', { user: n1, info: res('list', 'secrets', ns) }, 'no-opinion'],
  ['secret write', { user: n1, info: res('update', 'secrets', { ...ns, name: 'vol-secret' }) }, 'no-opinion'],
  ['config map (envFrom)', { user: n1, info: res('get', 'configmaps', { ...ns, name: 'env-cm' }) }, 'allow'],
  ['config map (projected)', { user: n1, info: res('get', 'configmaps', { ...ns, name: 'proj-cm' }) }, 'allow'],
  ['unrelated config map', { user: n1, info: res('get', 'configmaps', { ...ns, name: 'x' }) }, 'no-opinion'],
  ['claim of a bound pod', { user: n1, info: res('get', 'persistentvolumeclaims', { ...ns, name: 'data' }) }, 'allow'],
  ['claim list', { user: n1, info: res('list', 'persistentvolumeclaims', ns) }, 'no-opinion'],
  ['claim status update', { user: n1, info: res('update', 'persistentvolumeclaims/status', { ...ns, name: 'data' }) }, 'allow'],
  ['volume of a bound claim', { user: n1, info: res('get', 'persistentvolumes', { name: 'pv-1' }) }, 'allow'],
  ['volume of an unused claim', { user: n1, info: res('get', 'persistentvolumes', { name: 'pv-2' }) }, 'no-opinion'],
  ['token for a bound pod service account', { user: n1, info: res('create', 'serviceaccounts/token', { ...ns, name: 'web-sa' }) }, 'allow'],
  ['token for another service account', { user: n1, info: res('create', 'serviceaccounts/token', { ...ns, name: 'x' }) }, 'no-opinion'],
  ['own node get', { user: n1, info: res('get', 'nodes', { name: 'n1' }) }, 'allow'],
  ['other node get', { user: n1, info: res('get', 'nodes', { name: 'n2' }) }, 'no-opinion'],
  ['node list unrestricted', { user: n1, info: res('list', 'nodes') }, 'no-opinion'],
  ['node watch with metadata.name=self', nodeList('watch', 'nodes', {}, ['metadata.name', 'n1']), 'allow'],
  ['node create (NodeRestriction checks the name)', { user: n1, info: res('create', 'nodes') }, 'allow'],
  ['node status patch', { user: n1, info: res('patch', 'nodes/status', { name: 'n1' }) }, 'allow'],
  ['node patch', { user: n1, info: res('patch', 'nodes', { name: 'n1' }) }, 'allow'],
  ['node delete is not a node rule', { user: n1, info: res('delete', 'nodes', { name: 'n1' }) }, 'no-opinion'],
  ['bound pod get', { user: n1, info: res('get', 'pods', { ...ns, name: 'web' }) }, 'allow'],
  ["another node's pod get", { user: n1, info: res('get', 'pods', { ...ns, name: 'db' }) }, 'no-opinion'],
  ['pod list with spec.nodeName=self', nodeList('list', 'pods', {}, ['spec.nodeName', 'n1']), 'allow'],
  ['pod watch with spec.nodeName=other', nodeList('watch', 'pods', {}, ['spec.nodeName', 'n2']), 'no-opinion'],
  ['pod list without selector', { user: n1, info: res('list', 'pods') }, 'no-opinion'],
  ['pod status update (NodeRestriction checks binding)', { user: n1, info: res('update', 'pods/status', { ...ns, name: 'web' }) }, 'allow'],
  ['pod create (mirror pods)', { user: n1, info: res('create', 'pods', ns) }, 'allow'],
  ['pod update is not allowed', { user: n1, info: res('update', 'pods', { ...ns, name: 'web' }) }, 'no-opinion'],
  ['own lease', { user: n1, info: res('update', 'leases', { apiGroup: 'coordination.svc.io', namespace: 'svc-node-lease', name: 'n1' }) }, 'allow'],
  ['lease create', { user: n1, info: res('create', 'leases', { apiGroup: 'coordination.svc.io', namespace: 'svc-node-lease' }) }, 'allow'],
  ["another node's lease", { user: n1, info: res('update', 'leases', { apiGroup: 'coordination.svc.io', namespace: 'svc-node-lease', name: 'n2' }) }, 'no-opinion'],
  ['lease elsewhere', { user: n1, info: res('get', 'leases', { apiGroup: 'coordination.svc.io', namespace: 'default', name: 'n1' }) }, 'no-opinion'],
  ['lease list', { user: n1, info: res('list', 'leases', { apiGroup: 'coordination.svc.io', namespace: 'svc-node-lease' }) }, 'no-opinion'],
  ['events', { user: n1, info: res('create', 'events', ns) }, 'allow'],
  // Upstream's NodeRules eventsRule: create, update and patch in core and events.k8s.io, nothing more.
  ['event patch (the recorder counts repeats)', { user: n1, info: res('patch', 'events', { ...ns, name: 'web.17f' }) }, 'allow'],
  ['event of a cluster-scoped object (namespace default)', { user: n1, info: res('create', 'events', { namespace: 'default' }) }, 'allow'],
  ['events.svc.io event create', { user: n1, info: res('create', 'events', { ...ns, apiPrefix: 'apis', apiGroup: 'events.svc.io' }) }, 'allow'],
  ['event get', { user: n1, info: res('get', 'events', { ...ns, name: 'web.17f' }) }, 'no-opinion'],
  ['event list', { user: n1, info: res('list', 'events', ns) }, 'no-opinion'],
  ['event delete', { user: n1, info: res('delete', 'events', { ...ns, name: 'web.17f' }) }, 'no-opinion'],
  ['services list', { user: n1, info: res('list', 'services') }, 'allow'],
  ['endpoints get', { user: n1, info: res('get', 'endpoints', { ...ns, name: 'e' }) }, 'allow'],
  // svc-node's cluster DNS and proxy follow EndpointSlices (issue 24) through RBAC's default system:svc-node-proxier binding; the Node authorizer stays upstream's.
  ['endpointslices list and watch (cluster DNS, proxy)', { user: n1, info: res('watch', 'endpointslices', { apiPrefix: 'apis', apiGroup: 'discovery.svc.io' }) }, 'no-opinion'],
  ['endpointslices create', { user: n1, info: res('create', 'endpointslices', { ...ns, apiPrefix: 'apis', apiGroup: 'discovery.svc.io' }) }, 'no-opinion'],
  ['CSR create', { user: n1, info: res('create', 'certificatesigningrequests', { apiGroup: 'certificates.svc.io' }) }, 'allow'],
  ['CSR approve', { user: n1, info: res('update', 'certificatesigningrequests/approval', { apiGroup: 'certificates.svc.io', name: 'x' }) }, 'no-opinion'],
  ['TokenReview create', { user: n1, info: res('create', 'tokenreviews', { apiGroup: 'authentication.svc.io' }) }, 'allow'],
  ['SubjectAccessReview create', { user: n1, info: res('create', 'subjectaccessreviews', { apiGroup: 'authorization.svc.io' }) }, 'allow'],
  ['namespaces list', { user: n1, info: res('list', 'namespaces') }, 'no-opinion'],
  ['non-resource path', { user: n1, info: nonRes('get', '/healthz') }, 'no-opinion'],
  ['not a node: no opinion', { user: user('alice'), info: res('get', 'secrets', { ...ns, name: 'vol-secret' }) }, 'no-opinion'],
  ['node name without system:nodes group', { user: { username: 'system:node:n1', groups: [] }, info: res('get', 'secrets', { ...ns, name: 'vol-secret' }) }, 'no-opinion'],
  ['system:nodes without a node name', { user: { username: 'system:node:', groups: ['system:nodes'] }, info: res('get', 'nodes', { name: '' }) }, 'no-opinion'],
];

for (const [name, attrs, want] of cases) {
  test(`Node: ${name}`, async (t) => {
    const d = await new NodeAuthorizer(graph()).authorize(attrs);
    t.is(d.decision, want, d.reason);
  });
}

test('graph follows pod deletion, rescheduling and claim rebinding', (t) => {
  const g = graph();
  const z = new NodeAuthorizer(g);
  const get = (name: string) => z.decide({ user: n1, info: res('get', 'secrets', { ...ns, name }) }).decision;
  t.is(get('vol-secret'), 'allow');
  g.remove(podsT, pod('web', 'n1'));
  t.is(get('vol-secret'), 'no-opinion');
  g.upsert(podsT, pod('db', 'n1', { volumes: [{ name: 'v', secret: { secretName: 'db-secret' } }] }));
  t.is(get('db-secret'), 'allow');
  g.upsert(podsT, pod('db', 'n2', { volumes: [{ name: 'v', secret: { secretName: 'db-secret' } }] }));
  t.is(get('db-secret'), 'no-opinion');
  // Two pods naming one secret: it stays readable until both are gone.
  g.upsert(podsT, pod('a', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's' } }] }));
  g.upsert(podsT, pod('b', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's' } }] }));
  g.remove(podsT, pod('a', 'n1'));
  t.is(get('s'), 'allow');
  g.remove(podsT, pod('b', 'n1'));
  t.is(get('s'), 'no-opinion');
  g.upsert(podsT, pod('c', 'n1', { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'other' } }] }));
  t.is(z.decide({ user: n1, info: res('get', 'persistentvolumes', { name: 'pv-2' }) }).decision, 'allow');
  g.upsert(pvcT, { metadata: { name: 'other', namespace: 'ns' }, spec: { volumeName: 'pv-3' } });
  t.is(z.decide({ user: n1, info: res('get', 'persistentvolumes', { name: 'pv-2' }) }).decision, 'no-opinion');
  t.is(z.decide({ user: n1, info: res('get', 'persistentvolumes', { name: 'pv-3' }) }).decision, 'allow');
});

test('nodes report incomplete rules', (t) => {
  const z = new NodeAuthorizer(new NodeGraph());
  t.true(z.rulesFor(n1).incomplete);
  t.false(z.rulesFor(user('alice')).incomplete);
});
