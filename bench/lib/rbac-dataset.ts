/**
 * The RBAC population of the authz bench (issue 9): 1,000 roles (500 ClusterRoles, 500 Roles over
 * 20 namespaces) and 5,000 bindings (1,000 ClusterRoleBindings, 4,000 RoleBindings) naming 2,000
 * users, 100 groups and service accounts, plus the one binding that lets the bench user read
 * ConfigMaps in one namespace. The bench user belongs to two of the 100 groups: a decision for it
 * first walks the ClusterRoleBindings of those groups and the default ones of system:authenticated
 * (about 25), then the RoleBindings of its namespace; a denied request walks all of them, including
 * the 40 RoleBindings of group-23 in that namespace.
 */

export const RBAC_API = 'rbac.authorization.svc.io/v1';
export const BENCH_USER = 'bench-user';
export const BENCH_GROUPS = ['group-23', 'group-42'];
export const BENCH_NAMESPACE = 'bench-ns-3';
export const BENCH_CONFIGMAP = 'bench-cm';

export interface DatasetObject {
  /** Collection path under the API root, e.g. /apis/rbac.authorization.svc.io/v1/clusterroles. */
  collection: string;
  /** '' for cluster-scoped objects. */
  namespace: string;
  resource: 'namespaces' | 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings';
  body: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [k: string]: unknown };
}

const NAMESPACES = 20;
const CLUSTER_ROLES = 500;
const ROLES = 500;
const CLUSTER_BINDINGS = 1000;
const ROLE_BINDINGS = 4000;

const RESOURCES = ['pods', 'services', 'deployments', 'secrets', 'configmaps', 'jobs', 'events', 'ingresses', 'leases', 'endpoints'];
const VERBS = [['get', 'list', 'watch'], ['create', 'update', 'patch'], ['delete'], ['get']];

/** A few rules that never grant the bench requests (other resources, or other verbs on configmaps, or named objects). */
function rules(i: number): object[] {
  return [
    { apiGroups: [''], resources: [RESOURCES[i % 10], RESOURCES[(i + 3) % 10]].filter((r) => r !== 'configmaps'), verbs: VERBS[i % 4] },
    { apiGroups: ['apps', 'batch'], resources: ['deployments', 'jobs'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: [`cm-${i}`] },
  ];
}

function subjects(i: number, namespace?: string): object[] {
  const s: object[] = [
    { kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: `user-${i % 2000}` },
    { kind: 'Group', apiGroup: 'rbac.authorization.svc.io', name: `group-${i % 100}` },
  ];
  if (namespace) s.push({ kind: 'ServiceAccount', name: `sa-${i % 50}`, namespace });
  return s;
}

/** Every object in creation order: namespaces, roles, then bindings (a binding's role exists before it). */
export function rbacDataset(): DatasetObject[] {
  const out: DatasetObject[] = [];
  const ns = (i: number) => `bench-ns-${i % NAMESPACES}`;
  for (let i = 0; i < NAMESPACES; i++) {
    out.push({ collection: '/api/v1/namespaces', namespace: '', resource: 'namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns(i) } } });
  }
  for (let i = 0; i < CLUSTER_ROLES; i++) {
    out.push({
      collection: `/apis/${RBAC_API}/clusterroles`,
      namespace: '',
      resource: 'clusterroles',
      body: { apiVersion: RBAC_API, kind: 'ClusterRole', metadata: { name: `bench-cr-${i}` }, rules: rules(i) },
    });
  }
  for (let i = 0; i < ROLES; i++) {
    const n = ns(i);
    out.push({
      collection: `/apis/${RBAC_API}/namespaces/${n}/roles`,
      namespace: n,
      resource: 'roles',
      body: { apiVersion: RBAC_API, kind: 'Role', metadata: { name: `bench-role-${i}`, namespace: n }, rules: rules(i + 7) },
    });
  }
  for (let i = 0; i < CLUSTER_BINDINGS; i++) {
    out.push({
      collection: `/apis/${RBAC_API}/clusterrolebindings`,
      namespace: '',
      resource: 'clusterrolebindings',
      body: {
        apiVersion: RBAC_API,
        kind: 'ClusterRoleBinding',
        metadata: { name: `bench-crb-${i}` },
        roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: `bench-cr-${i % CLUSTER_ROLES}` },
        subjects: subjects(i),
      },
    });
  }
  for (let i = 0; i < ROLE_BINDINGS; i++) {
    const n = ns(i);
    // Role j lives in namespace j % 20; pick one of the 25 roles of this binding's namespace.
    const role = (Math.floor(i / NAMESPACES) % (ROLES / NAMESPACES)) * NAMESPACES + (i % NAMESPACES);
    out.push({
      collection: `/apis/${RBAC_API}/namespaces/${n}/rolebindings`,
      namespace: n,
      resource: 'rolebindings',
      body: {
        apiVersion: RBAC_API,
        kind: 'RoleBinding',
        metadata: { name: `bench-rb-${i}`, namespace: n },
        roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'Role', name: `bench-role-${role}` },
        subjects: subjects(i, n),
      },
    });
  }
  return out;
}

/** The role and binding that allow the bench user to read ConfigMaps in BENCH_NAMESPACE (and nothing else). */
export function benchUserGrant(): DatasetObject[] {
  return [
    {
      collection: `/apis/${RBAC_API}/namespaces/${BENCH_NAMESPACE}/roles`,
      namespace: BENCH_NAMESPACE,
      resource: 'roles',
      body: { apiVersion: RBAC_API, kind: 'Role', metadata: { name: 'bench-configmap-reader', namespace: BENCH_NAMESPACE }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] },
    },
    {
      collection: `/apis/${RBAC_API}/namespaces/${BENCH_NAMESPACE}/rolebindings`,
      namespace: BENCH_NAMESPACE,
      resource: 'rolebindings',
      body: {
        apiVersion: RBAC_API,
        kind: 'RoleBinding',
        metadata: { name: 'bench-configmap-reader', namespace: BENCH_NAMESPACE },
        roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'Role', name: 'bench-configmap-reader' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: BENCH_USER }],
      },
    },
  ];
}

/** Counts of the population (for the printed setup). */
export const DATASET_COUNTS = { namespaces: NAMESPACES, roles: ROLES, cluster_roles: CLUSTER_ROLES, role_bindings: ROLE_BINDINGS, cluster_role_bindings: CLUSTER_BINDINGS };
