import type { KObject } from '../api/types';
import { NODES_GROUP } from '../api/well-known';
import { RBAC_GROUP } from './rbac-policy';
import type { PolicyRule } from './rbac-rules';

/**
 * The default RBAC policy (A.6), after upstream's bootstrappolicy with k8s.io renamed svc.io and
 * component names adapted (kube-scheduler → svc-scheduler, kube-controller-manager →
 * svc-controller-manager, kube-proxy → svc-proxy, kube-system → svc-system). Created and
 * reconciled at every start by controllers/rbac-bootstrap.ts.
 *
 * Component roles and who they are bound to:
 * - system:svc-scheduler → User system:svc-scheduler
 * - system:svc-controller-manager → User system:svc-controller-manager
 * - system:node-proxier → User system:svc-proxy
 * - system:node-bootstrapper → Group system:bootstrappers (kubeadm's binding, so bootstrap tokens can ask for certificates)
 * - system:certificates.svc.io:certificatesigningrequests:nodeclient → Group system:bootstrappers
 * - system:certificates.svc.io:certificatesigningrequests:selfnodeclient → Group system:nodes
 * - system:node-proxier → Group system:nodes too, as binding system:svc-node-proxier (svc addition: svc-node embeds what
 *   upstream runs as kube-proxy and the cluster DNS, and routes to the other nodes' podCIDRs; it reads
 *   Services, EndpointSlices and every Node with the node's identity, as k3s's embedded proxy does)
 * - system:svc-node-network-policy → Group system:nodes (svc addition: NetworkPolicy enforcement in svc-node)
 * - system:auth-delegator, system:node (used by the Node authorizer), system:aggregate-to-* (no binding)
 * - system:monitoring → Group system:monitoring
 * - system:controller:<name> → User system:controller:<name>, the identities of the in-process controllers
 */

export const BOOTSTRAP_LABEL = 'svc.io/bootstrapping';
export const BOOTSTRAP_LABEL_VALUE = 'rbac-defaults';
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.svc.io/autoupdate';
export const AGGREGATE_TO = (role: 'admin' | 'edit' | 'view') => `rbac.authorization.svc.io/aggregate-to-${role}`;
/** Upstream's name of the same label (a group-named prefix: k8s.io, not kubernetes.io). */
export const UPSTREAM_AGGREGATE_TO = (role: 'admin' | 'edit' | 'view') => `rbac.authorization.k8s.io/aggregate-to-${role}`;

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const READ_WRITE = [...READ, ...WRITE];

const CORE = '';
const APPS = 'apps';
const AUTHN = 'authentication.svc.io';
const AUTHZ = 'authorization.svc.io';
const AUTOSCALING = 'autoscaling';
const BATCH = 'batch';
const CERTS = 'certificates.svc.io';
const COORD = 'coordination.svc.io';
const DISCOVERY = 'discovery.svc.io';
const EVENTS = 'events.svc.io';
const NETWORKING = 'networking.svc.io';
const NODE = 'node.svc.io';
const POLICY = 'policy';
const STORAGE = 'storage.svc.io';

function rule(verbs: string[], groups: string[], resources: string[], names?: string[]): PolicyRule {
  const r: PolicyRule = { verbs, apiGroups: groups, resources };
  return names ? { ...r, resourceNames: names } : r;
}

function urls(verbs: string[], paths: string[]): PolicyRule {
  return { verbs, nonResourceURLs: paths };
}

const eventsRule = (): PolicyRule => rule(['create', 'update', 'patch'], [CORE, EVENTS], ['events']);

export interface DefaultClusterRole {
  name: string;
  rules: PolicyRule[];
  labels?: Record<string, string>;
  aggregateFrom?: 'admin' | 'edit' | 'view';
}

export interface DefaultRole {
  namespace: string;
  name: string;
  rules: PolicyRule[];
}

export interface DefaultBinding {
  name: string;
  /** Set for a RoleBinding. */
  namespace?: string;
  roleKind: 'ClusterRole' | 'Role';
  role: string;
  subjects: { kind: 'User' | 'Group' | 'ServiceAccount'; name: string; namespace?: string }[];
}

/** What a node may do (upstream NodeRules); the Node authorizer applies the same list. */
export function nodeRules(): PolicyRule[] {
  return [
    rule(['create'], [AUTHN], ['tokenreviews']),
    rule(['create'], [AUTHZ], ['subjectaccessreviews', 'localsubjectaccessreviews']),
    rule(READ, [CORE], ['services']),
    rule(['create', 'get', 'list', 'watch'], [CORE], ['nodes']),
    rule(['update', 'patch'], [CORE], ['nodes/status']),
    rule(['update', 'patch'], [CORE], ['nodes']),
    eventsRule(),
    rule(READ, [CORE], ['pods']),
    rule(['create', 'delete'], [CORE], ['pods']),
    rule(['update', 'patch'], [CORE], ['pods/status']),
    rule(['create'], [CORE], ['pods/eviction']),
    rule(READ, [CORE], ['secrets', 'configmaps']),
    rule(['get'], [CORE], ['persistentvolumeclaims', 'persistentvolumes']),
    rule(['get'], [CORE], ['endpoints']),
    rule(['create', 'get', 'list', 'watch'], [CERTS], ['certificatesigningrequests']),
    rule(['get', 'create', 'update', 'patch', 'delete'], [COORD], ['leases']),
    rule(['get'], [STORAGE], ['volumeattachments']),
    rule(['create'], [CORE], ['serviceaccounts/token']),
    rule(['get', 'update', 'patch'], [CORE], ['persistentvolumeclaims/status']),
    // Upstream's system:node reads RuntimeClasses: the kubelet resolves runtimeClassName to a CRI handler.
    rule(READ, [NODE], ['runtimeclasses']),
  ];
}

const DISCOVERY_URLS = ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'];
// Upstream lists only the bare health paths; the individual checks (/livez/ping, ...) are added so
// load balancers and probes may read them too (their failure reasons are withheld anyway).
const PUBLIC_INFO_URLS = ['/healthz', '/livez', '/readyz', '/version', '/version/', '/healthz/*', '/livez/*', '/readyz/*'];

export function defaultClusterRoles(): DefaultClusterRole[] {
  return [
    { name: 'cluster-admin', rules: [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])] },
    { name: 'system:discovery', rules: [urls(['get'], DISCOVERY_URLS)] },
    { name: 'system:public-info-viewer', rules: [urls(['get'], PUBLIC_INFO_URLS)] },
    {
      name: 'system:basic-user',
      rules: [rule(['create'], [AUTHZ], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']), rule(['create'], [AUTHN], ['selfsubjectreviews'])],
    },
    {
      name: 'system:monitoring',
      rules: [urls(['get'], ['/metrics', '/metrics/slis', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*'])],
    },
    ...userFacingRoles(),
    { name: 'system:auth-delegator', rules: [rule(['create'], [AUTHN], ['tokenreviews']), rule(['create'], [AUTHZ], ['subjectaccessreviews'])] },
    { name: 'system:node', rules: nodeRules() },
    { name: 'system:node-bootstrapper', rules: [rule(['create', 'get', 'list', 'watch'], [CERTS], ['certificatesigningrequests'])] },
    { name: 'system:certificates.svc.io:certificatesigningrequests:nodeclient', rules: [rule(['create'], [CERTS], ['certificatesigningrequests/nodeclient'])] },
    { name: 'system:certificates.svc.io:certificatesigningrequests:selfnodeclient', rules: [rule(['create'], [CERTS], ['certificatesigningrequests/selfnodeclient'])] },
    {
      name: 'system:node-proxier',
      rules: [
        rule(['list', 'watch'], [CORE], ['services', 'endpoints']),
        rule(READ, [CORE], ['nodes']),
        eventsRule(),
        rule(['list', 'watch'], [DISCOVERY], ['endpointslices']),
      ],
    },
    {
      // svc addition: svc-node enforces NetworkPolicies (agent/netpol/), as k3s embeds a policy controller; it follows the
      // policies, every pod (peers run on other nodes) and the namespaces' labels. Not in system:node: the Node authorizer stays upstream's.
      name: 'system:svc-node-network-policy',
      rules: [rule(['list', 'watch'], [NETWORKING], ['networkpolicies']), rule(['list', 'watch'], [CORE], ['pods', 'namespaces'])],
    },
    {
      name: 'system:svc-scheduler',
      rules: [
        eventsRule(),
        rule(['create'], [COORD], ['leases']),
        rule(['get', 'update'], [COORD], ['leases'], ['svc-scheduler']),
        rule(READ, [CORE], ['nodes']),
        rule(['get', 'list', 'watch', 'delete'], [CORE], ['pods']),
        rule(['create'], [CORE], ['bindings', 'pods/binding']),
        rule(['patch', 'update'], [CORE], ['pods/status']),
        rule(READ, [CORE], ['replicationcontrollers', 'services', 'namespaces', 'persistentvolumeclaims', 'persistentvolumes']),
        rule(READ, [APPS], ['replicasets', 'statefulsets']),
        rule(READ, [POLICY], ['poddisruptionbudgets']),
        rule(['create'], [AUTHN], ['tokenreviews']),
        rule(['create'], [AUTHZ], ['subjectaccessreviews']),
        rule(READ, [STORAGE], ['csinodes', 'csidrivers', 'csistoragecapacities', 'storageclasses']),
      ],
    },
    {
      name: 'system:svc-controller-manager',
      rules: [
        eventsRule(),
        rule(['create'], [COORD], ['leases']),
        rule(['get', 'update'], [COORD], ['leases'], ['svc-controller-manager']),
        rule(['create'], [CORE], ['secrets', 'serviceaccounts']),
        rule(['delete'], [CORE], ['secrets']),
        rule(['get'], [CORE], ['configmaps', 'namespaces', 'secrets', 'serviceaccounts']),
        rule(['update'], [CORE], ['secrets', 'serviceaccounts']),
        rule(['create'], [CORE], ['serviceaccounts/token']),
        rule(['create'], [AUTHN], ['tokenreviews']),
        rule(['create'], [AUTHZ], ['subjectaccessreviews']),
        rule(['list', 'watch'], ['*'], ['*']),
      ],
    },
    ...controllerRoles(),
  ];
}

/**
 * The user-facing roles: admin, edit and view, which the aggregation controller fills from the
 * system:aggregate-to-* roles (and any user role with the labels), and those three parts.
 */
function userFacingRoles(): DefaultClusterRole[] {
  return [
    { name: 'admin', rules: [], aggregateFrom: 'admin' },
    { name: 'edit', rules: [], aggregateFrom: 'edit', labels: { [AGGREGATE_TO('admin')]: 'true' } },
    { name: 'view', rules: [], aggregateFrom: 'view', labels: { [AGGREGATE_TO('edit')]: 'true' } },
    {
      // edit plus the power to grant permissions inside a namespace.
      name: 'system:aggregate-to-admin',
      labels: { [AGGREGATE_TO('admin')]: 'true' },
      rules: [rule(['create'], [AUTHZ], ['localsubjectaccessreviews']), rule(READ_WRITE, [RBAC_GROUP], ['roles', 'rolebindings'])],
    },
    {
      // Every user-level action in a namespace, secrets included; no roles, no status, no quota, no EndpointSlice writes.
      name: 'system:aggregate-to-edit',
      labels: { [AGGREGATE_TO('edit')]: 'true' },
      rules: [
        rule(READ, [CORE], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
        rule(['impersonate'], [CORE], ['serviceaccounts']),
        rule(WRITE, [CORE], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
        rule(['create'], [CORE], ['pods/eviction']),
        rule(WRITE, [CORE], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
        rule(['create'], [CORE], ['serviceaccounts/token']),
        rule(WRITE, [APPS], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
        rule(WRITE, [AUTOSCALING], ['horizontalpodautoscalers']),
        rule(WRITE, [BATCH], ['jobs', 'cronjobs']),
        rule(WRITE, [POLICY], ['poddisruptionbudgets']),
        rule(WRITE, [NETWORKING], ['networkpolicies', 'ingresses']),
        rule(READ_WRITE, [COORD], ['leases']),
      ],
    },
    {
      // Read-only access to non-escalating resources: no secrets, no roles.
      name: 'system:aggregate-to-view',
      labels: { [AGGREGATE_TO('view')]: 'true' },
      rules: [
        rule(READ, [CORE], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
        rule(READ, [CORE], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log']),
        rule(READ, [CORE], ['namespaces']),
        rule(READ, [DISCOVERY], ['endpointslices']),
        rule(READ, [EVENTS], ['events']),
        rule(READ, [APPS], ['controllerrevisions', 'statefulsets', 'statefulsets/status', 'statefulsets/scale', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/status', 'deployments/scale', 'replicasets', 'replicasets/status', 'replicasets/scale']),
        rule(READ, [AUTOSCALING], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(READ, [BATCH], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        rule(READ, [POLICY], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(READ, [NETWORKING], ['networkpolicies', 'ingresses', 'ingresses/status']),
      ],
    },
    {
      // What metrics-server's manifest adds for the bundled resource metrics API: kubectl top for view, edit and admin.
      name: 'system:aggregated-metrics-reader',
      labels: { [AGGREGATE_TO('view')]: 'true', [AGGREGATE_TO('edit')]: 'true', [AGGREGATE_TO('admin')]: 'true' },
      rules: [rule(READ, ['metrics.svc.io'], ['pods', 'nodes'])],
    },
  ];
}

/** Roles of the in-process controllers (upstream's system:controller:* roles, for our controllers). */
function controllerRoles(): DefaultClusterRole[] {
  const c = (name: string, rules: PolicyRule[]): DefaultClusterRole => ({ name: `system:controller:${name}`, rules: [...rules, eventsRule()] });
  return [
    c('clusterrole-aggregation-controller', [rule(['escalate', 'get', 'list', 'patch', 'update', 'watch'], [RBAC_GROUP], ['clusterroles'])]),
    c('namespace-controller', [
      rule(['get', 'list', 'watch', 'delete'], [CORE], ['namespaces']),
      rule(['update'], [CORE], ['namespaces/finalize', 'namespaces/status']),
      rule(['get', 'list', 'delete', 'deletecollection'], ['*'], ['*']),
    ]),
    c('garbage-collector', [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*'])]),
    c('node-lifecycle-controller', [
      rule(['get', 'list', 'update', 'delete', 'patch'], [CORE], ['nodes']),
      rule(['patch', 'update'], [CORE], ['nodes/status']),
      rule(['update'], [CORE], ['pods/status']),
      rule(['list', 'delete'], [CORE], ['pods']),
    ]),
    c('certificate-controller', [
      rule(['get', 'list', 'watch', 'delete'], [CERTS], ['certificatesigningrequests']),
      rule(['update'], [CERTS], ['certificatesigningrequests/status']),
      rule(['sign'], [CERTS], ['signers'], ['svc.io/kube-apiserver-client', 'svc.io/kube-apiserver-client-kubelet', 'svc.io/kubelet-serving', 'svc.io/legacy-unknown']),
    ]),
    c('csrapproving', [
      rule(['get', 'list', 'watch'], [CERTS], ['certificatesigningrequests']),
      rule(['update'], [CERTS], ['certificatesigningrequests/approval']),
      rule(['approve'], [CERTS], ['signers'], ['svc.io/kube-apiserver-client-kubelet']),
      rule(['create'], [AUTHZ], ['subjectaccessreviews']),
    ]),
    c('service-account-controller', [rule(['create'], [CORE], ['serviceaccounts'])]),
  ];
}

/** Namespaced defaults (upstream's kube-system / kube-public roles). */
export function defaultRoles(): DefaultRole[] {
  return [
    { namespace: 'svc-system', name: 'system:controller:token-cleaner', rules: [rule(['delete', 'get', 'list', 'watch'], [CORE], ['secrets']), eventsRule()] },
    {
      namespace: 'svc-public',
      name: 'system:controller:bootstrap-signer',
      rules: [rule(READ, [CORE], ['configmaps']), rule(['update'], [CORE], ['configmaps'], ['cluster-info']), eventsRule()],
    },
    // kubeadm's role letting anyone read cluster-info for node join discovery.
    { namespace: 'svc-public', name: 'svc:bootstrap-signer-clusterinfo', rules: [rule(['get'], [CORE], ['configmaps'], ['cluster-info'])] },
  ];
}

export function defaultBindings(): DefaultBinding[] {
  const crb = (name: string, subjects: DefaultBinding['subjects'], role = name): DefaultBinding => ({ name, roleKind: 'ClusterRole', role, subjects });
  const group = (name: string) => ({ kind: 'Group' as const, name });
  const user = (name: string) => ({ kind: 'User' as const, name });
  const controllers = ['clusterrole-aggregation-controller', 'namespace-controller', 'garbage-collector', 'node-lifecycle-controller', 'certificate-controller', 'csrapproving', 'service-account-controller'];
  return [
    crb('cluster-admin', [group('system:masters')]),
    crb('system:discovery', [group('system:authenticated')]),
    crb('system:basic-user', [group('system:authenticated')]),
    crb('system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
    crb('system:monitoring', [group('system:monitoring')]),
    crb('system:node-proxier', [user('system:svc-proxy')]),
    crb('system:svc-scheduler', [user('system:svc-scheduler')]),
    crb('system:svc-controller-manager', [user('system:svc-controller-manager')]),
    crb('system:node-bootstrapper', [group('system:bootstrappers')]),
    crb('system:certificates.svc.io:certificatesigningrequests:nodeclient', [group('system:bootstrappers')]),
    crb('system:certificates.svc.io:certificatesigningrequests:selfnodeclient', [group(NODES_GROUP)]),
    crb('system:svc-node-proxier', [group(NODES_GROUP)], 'system:node-proxier'),
    crb('system:svc-node-network-policy', [group(NODES_GROUP)]),
    ...controllers.map((c) => crb(`system:controller:${c}`, [user(`system:controller:${c}`)])),
    { name: 'system:controller:token-cleaner', namespace: 'svc-system', roleKind: 'Role', role: 'system:controller:token-cleaner', subjects: [user('system:controller:token-cleaner')] },
    { name: 'system:controller:bootstrap-signer', namespace: 'svc-public', roleKind: 'Role', role: 'system:controller:bootstrap-signer', subjects: [user('system:controller:bootstrap-signer')] },
    { name: 'svc:bootstrap-signer-clusterinfo', namespace: 'svc-public', roleKind: 'Role', role: 'svc:bootstrap-signer-clusterinfo', subjects: [user('system:anonymous')] },
  ];
}

function meta(name: string, namespace: string | undefined, labels: Record<string, string> = {}): KObject['metadata'] {
  const m: KObject['metadata'] = { name, labels: { ...labels, [BOOTSTRAP_LABEL]: BOOTSTRAP_LABEL_VALUE }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } };
  if (namespace) m.namespace = namespace;
  return m;
}

/** The default ClusterRole as an API object. */
export function clusterRoleObject(r: DefaultClusterRole): KObject {
  const o: KObject = { apiVersion: `${RBAC_GROUP}/v1`, kind: 'ClusterRole', metadata: meta(r.name, undefined, r.labels), rules: r.rules };
  // Either spelling of the aggregation label (issue 17): upstream manifests label their ClusterRoles
  // rbac.authorization.k8s.io/aggregate-to-view and expect view, edit and admin to take them in.
  if (r.aggregateFrom) o.aggregationRule = { clusterRoleSelectors: [AGGREGATE_TO(r.aggregateFrom), UPSTREAM_AGGREGATE_TO(r.aggregateFrom)].map((k) => ({ matchLabels: { [k]: 'true' } })) };
  return o;
}

export function roleObject(r: DefaultRole): KObject {
  return { apiVersion: `${RBAC_GROUP}/v1`, kind: 'Role', metadata: meta(r.name, r.namespace), rules: r.rules };
}

export function bindingObject(b: DefaultBinding): KObject {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: b.namespace ? 'RoleBinding' : 'ClusterRoleBinding',
    metadata: meta(b.name, b.namespace),
    roleRef: { apiGroup: RBAC_GROUP, kind: b.roleKind, name: b.role },
    subjects: b.subjects.map((s) => (s.kind === 'ServiceAccount' ? { kind: s.kind, name: s.name, namespace: s.namespace } : { kind: s.kind, apiGroup: RBAC_GROUP, name: s.name })),
  };
}
