/** Representative objects of the non-core groups and of meta/v1, for the protobuf tests. */

const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: `uid-${name}`,
  resourceVersion: '42',
  creationTimestamp: '2025-03-01T12:00:00Z',
});

export const leaseFixture = {
  apiVersion: 'coordination.svc.io/v1',
  kind: 'Lease',
  metadata: meta('node-1', 'svc-node-lease'),
  spec: {
    holderIdentity: 'node-1',
    leaseDurationSeconds: 40,
    acquireTime: '2025-03-01T12:00:00.000000Z',
    renewTime: '2025-03-01T12:05:30.999999Z',
    leaseTransitions: 0,
    strategy: 'OldestEmulationVersion',
    preferredHolder: 'node-2',
  },
};

export const eventV1Fixture = {
  apiVersion: 'events.svc.io/v1',
  kind: 'Event',
  metadata: meta('web-0.2', 'shop'),
  eventTime: '2025-03-01T12:00:10.500000Z',
  series: { count: 5, lastObservedTime: '2025-03-01T12:09:00.250000Z' },
  reportingController: 'svc.io/kubelet',
  reportingInstance: 'node-1',
  action: 'Pulling',
  reason: 'Pulling',
  regarding: { kind: 'Pod', namespace: 'shop', name: 'web-0' },
  related: { kind: 'Node', name: 'node-1' },
  note: 'Pulling image',
  type: 'Normal',
  deprecatedSource: { component: 'kubelet' },
  deprecatedFirstTimestamp: '2025-03-01T12:00:10Z',
  deprecatedCount: 5,
};

export const pdbFixture = {
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { ...meta('web', 'shop'), generation: 3 },
  spec: { minAvailable: '50%', selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
  status: {
    observedGeneration: 3,
    disruptedPods: { 'web-1': '2025-03-01T12:00:20Z' },
    disruptionsAllowed: 0,
    currentHealthy: 2,
    desiredHealthy: 2,
    expectedPods: 3,
    conditions: [{ type: 'DisruptionAllowed', status: 'False', lastTransitionTime: '2025-03-01T12:00:20Z', reason: 'InsufficientPods', message: 'no' }],
  },
};

export const evictionFixture = {
  apiVersion: 'policy/v1',
  kind: 'Eviction',
  metadata: { name: 'web-0', namespace: 'shop' },
  deleteOptions: { gracePeriodSeconds: 0, preconditions: { uid: 'u', resourceVersion: '9' }, propagationPolicy: 'Background', dryRun: ['All'] },
};

const pem = '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n';

export const csrFixture = {
  apiVersion: 'certificates.svc.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: meta('node-csr-1'),
  spec: {
    request: Buffer.from(pem).toString('base64'),
    signerName: 'svc.io/kube-apiserver-client-kubelet',
    expirationSeconds: 86400,
    usages: ['digital signature', 'client auth'],
    username: 'system:node:node-1',
    uid: 'u-1',
    groups: ['system:nodes', 'system:authenticated'],
    extra: { 'authentication.svc.io/credential-id': ['X509SHA256=abc'], scopes: ['a', 'b'], empty: [] },
  },
  status: {
    conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'ok', lastUpdateTime: '2025-03-01T12:00:30Z', lastTransitionTime: '2025-03-01T12:00:30Z' }],
    certificate: Buffer.from('-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n').toString('base64'),
  },
};

const rules = [
  { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'pods/log'], resourceNames: ['web-0'] },
  { verbs: ['get'], nonResourceURLs: ['/healthz', '/api/*'] },
];

export const roleFixture = { apiVersion: 'rbac.authorization.svc.io/v1', kind: 'Role', metadata: meta('reader', 'shop'), rules: [rules[0]] };

export const clusterRoleFixture = {
  apiVersion: 'rbac.authorization.svc.io/v1',
  kind: 'ClusterRole',
  metadata: meta('aggregate'),
  rules,
  aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example/aggregate': 'true' } }] },
};

const subjects = [
  { kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: 'alice' },
  { kind: 'ServiceAccount', name: 'web', namespace: 'shop' },
];

export const roleBindingFixture = {
  apiVersion: 'rbac.authorization.svc.io/v1',
  kind: 'RoleBinding',
  metadata: meta('read', 'shop'),
  subjects,
  roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'Role', name: 'reader' },
};

export const clusterRoleBindingFixture = {
  apiVersion: 'rbac.authorization.svc.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: meta('read-all'),
  subjects,
  roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'aggregate' },
};

const resourceAttributes = {
  namespace: 'shop',
  verb: 'list',
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  subresource: 'scale',
  name: 'web',
  fieldSelector: { rawSelector: 'metadata.name=web', requirements: [{ key: 'metadata.name', operator: 'In', values: ['web'] }] },
  labelSelector: { requirements: [{ key: 'app', operator: 'Exists' }] },
};

const accessStatus = { allowed: false, denied: true, reason: 'no rule', evaluationError: 'partial' };

export const subjectAccessReviewFixture = {
  apiVersion: 'authorization.svc.io/v1',
  kind: 'SubjectAccessReview',
  metadata: {},
  spec: { resourceAttributes, user: 'alice', groups: ['dev'], extra: { scopes: ['x', 'y'] }, uid: 'u-a' },
  status: accessStatus,
};

export const localSubjectAccessReviewFixture = {
  apiVersion: 'authorization.svc.io/v1',
  kind: 'LocalSubjectAccessReview',
  metadata: { namespace: 'shop' },
  spec: { nonResourceAttributes: { path: '/logs', verb: 'get' }, user: 'bob' },
  status: { allowed: true },
};

export const selfSubjectAccessReviewFixture = {
  apiVersion: 'authorization.svc.io/v1',
  kind: 'SelfSubjectAccessReview',
  metadata: {},
  spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
  status: accessStatus,
};

export const selfSubjectRulesReviewFixture = {
  apiVersion: 'authorization.svc.io/v1',
  kind: 'SelfSubjectRulesReview',
  metadata: {},
  spec: { namespace: 'shop' },
  status: {
    resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }],
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api'] }],
    incomplete: false,
    evaluationError: 'webhook unavailable',
  },
};

const userInfo = { username: 'system:serviceaccount:shop:web', uid: 'u-sa', groups: ['system:serviceaccounts'], extra: { 'authentication.svc.io/pod-name': ['web-0'] } };

export const tokenRequestFixture = {
  apiVersion: 'authentication.svc.io/v1',
  kind: 'TokenRequest',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { audiences: ['api', 'vault'], expirationSeconds: 3600, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web-0', uid: 'u-pod' } },
  status: { token: 'eyJhbGciOi.x.y', expirationTimestamp: '2025-03-01T13:00:00Z' },
};

export const tokenReviewFixture = {
  apiVersion: 'authentication.svc.io/v1',
  kind: 'TokenReview',
  metadata: {},
  spec: { token: 'eyJ.x.y', audiences: ['api'] },
  status: { authenticated: true, user: userInfo, audiences: ['api'], error: 'none' },
};

export const selfSubjectReviewFixture = {
  apiVersion: 'authentication.svc.io/v1',
  kind: 'SelfSubjectReview',
  metadata: { creationTimestamp: '2025-03-01T12:00:00Z' },
  status: { userInfo },
};

export const statusFixture = {
  apiVersion: 'v1',
  kind: 'Status',
  metadata: { resourceVersion: '12', continue: 'token' },
  status: 'Failure',
  message: 'pods "x" is invalid: spec.containers[0].image: Required value',
  reason: 'Invalid',
  details: { name: 'x', group: 'svc.io', kind: 'Pod', uid: 'u', causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[0].image' }], retryAfterSeconds: 3 },
  code: 422,
};

export const deleteOptionsFixture = {
  apiVersion: 'meta.k8s.io/v1',
  kind: 'DeleteOptions',
  gracePeriodSeconds: 0,
  preconditions: { uid: 'u', resourceVersion: '' },
  orphanDependents: false,
  propagationPolicy: 'Foreground',
  dryRun: ['All'],
};

export const priorityClassFixture = {
  apiVersion: 'scheduling.svc.io/v1',
  kind: 'PriorityClass',
  metadata: { name: 'high', uid: 'u-pc', resourceVersion: '7' },
  value: 1000000,
  globalDefault: true,
  description: 'For the pods that must run first.',
  preemptionPolicy: 'PreemptLowerPriority',
};

export const runtimeClassFixture = {
  apiVersion: 'node.svc.io/v1',
  kind: 'RuntimeClass',
  metadata: { name: 'kata', uid: 'u-rc', resourceVersion: '8' },
  handler: 'kata',
  overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
  scheduling: { nodeSelector: { 'runtime.svc.io/kata': 'true' }, tolerations: [{ key: 'kata', operator: 'Exists', effect: 'NoSchedule' }] },
};

export const storageClassFixture = {
  apiVersion: 'storage.svc.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'local-path', uid: 'u-sc', resourceVersion: '9', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  provisioner: 'svc.io/local-path',
  parameters: { nodePath: '/var/lib/svc-node/local-path' },
  reclaimPolicy: 'Delete',
  mountOptions: ['noatime'],
  allowVolumeExpansion: true,
  volumeBindingMode: 'WaitForFirstConsumer',
  allowedTopologies: [{ matchLabelExpressions: [{ key: 'svc.io/hostname', values: ['n1', 'n2'] }] }],
};

export const csiDriverFixture = {
  apiVersion: 'storage.svc.io/v1',
  kind: 'CSIDriver',
  metadata: { name: 'csi.example.com', uid: 'u-csid', resourceVersion: '10' },
  spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'], storageCapacity: true, fsGroupPolicy: 'File', tokenRequests: [{ audience: 'vault', expirationSeconds: 3600 }], requiresRepublish: true, seLinuxMount: true },
};

export const csiNodeFixture = {
  apiVersion: 'storage.svc.io/v1',
  kind: 'CSINode',
  metadata: { name: 'worker-1', uid: 'u-csin', resourceVersion: '11' },
  spec: { drivers: [{ name: 'csi.example.com', nodeID: 'worker-1', topologyKeys: ['topology.svc.io/zone'], allocatable: { count: 8 } }] },
};

export const volumeAttachmentFixture = {
  apiVersion: 'storage.svc.io/v1',
  kind: 'VolumeAttachment',
  metadata: { name: 'csi-1', uid: 'u-va', resourceVersion: '12' },
  spec: { attacher: 'csi.example.com', source: { persistentVolumeName: 'pv1' }, nodeName: 'worker-1' },
  status: { attached: true, attachmentMetadata: { dev: '/dev/sdb' }, attachError: { time: '2026-01-01T00:00:00Z', message: 'timed out', errorCode: 4 } },
};

export const crdFixture = {
  apiVersion: 'apiextensions.svc.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com', uid: 'u-crd', resourceVersion: '13' },
  spec: {
    group: 'example.com',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'] },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer', minimum: 1 } } } } } }, subresources: { status: {} } }],
    conversion: { strategy: 'None' },
  },
  status: { conditions: [{ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: '2026-01-01T00:00:00Z' }], acceptedNames: { plural: 'widgets', kind: 'Widget' }, storedVersions: ['v1'] },
};

export const apiServiceFixture = {
  apiVersion: 'apiregistration.svc.io/v1',
  kind: 'APIService',
  metadata: { name: 'v1alpha1.wardle.example.com', uid: 'u-as', resourceVersion: '14' },
  spec: { service: { namespace: 'wardle', name: 'api', port: 8443 }, group: 'wardle.example.com', version: 'v1alpha1', caBundle: Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64'), groupPriorityMinimum: 1000, versionPriority: 15 },
  status: { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Passed', message: 'all checks passed' }] },
};

export const endpointSliceFixture = {
  apiVersion: 'discovery.svc.io/v1',
  kind: 'EndpointSlice',
  metadata: { ...meta('web-abc12', 'shop'), generateName: 'web-', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: [
    {
      addresses: ['10.244.0.5'],
      conditions: { ready: true, serving: true, terminating: false },
      hostname: 'web-0',
      targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-0', uid: 'u' },
      deprecatedTopology: { 'kubernetes.io/hostname': 'node-1' },
      nodeName: 'node-1',
      zone: 'zone-a',
      hints: { forZones: [{ name: 'zone-a' }] },
    },
    { addresses: ['10.244.0.6'], conditions: { ready: false, serving: false, terminating: true } },
  ],
  ports: [{ name: 'http', protocol: 'TCP', port: 8080, appProtocol: 'http' }, { name: '', protocol: 'UDP' }],
};

export const networkPolicyFixture = {
  apiVersion: 'networking.svc.io/v1',
  kind: 'NetworkPolicy',
  metadata: meta('web-allow', 'shop'),
  spec: {
    podSelector: { matchLabels: { app: 'web' } },
    ingress: [{ ports: [{ protocol: 'TCP', port: 8080 }, { protocol: 'TCP', port: 'http' }, { protocol: 'UDP', port: 30000, endPort: 30100 }], from: [{ podSelector: { matchLabels: { role: 'fe' } }, namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] } }, { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }] }],
    egress: [{ to: [{ namespaceSelector: {} }] }],
    policyTypes: ['Ingress', 'Egress'],
  },
};

export const ingressClassFixture = {
  apiVersion: 'networking.svc.io/v1',
  kind: 'IngressClass',
  metadata: { name: 'nginx', uid: 'u-ic', resourceVersion: '14', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
  spec: { controller: 'example.com/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'external-lb', scope: 'Namespace', namespace: 'ingress' } },
};

export const ingressFixture = {
  apiVersion: 'networking.svc.io/v1',
  kind: 'Ingress',
  metadata: meta('web', 'shop'),
  spec: {
    ingressClassName: 'nginx',
    defaultBackend: { resource: { apiGroup: 'k8s.example.com', kind: 'StorageBucket', name: 'static' } },
    tls: [{ hosts: ['foo.example.com', '*.bar.example.com'], secretName: 'web-cert' }],
    rules: [
      { host: 'foo.example.com', http: { paths: [{ path: '/api', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 8080 } } } }, { path: '/', pathType: 'ImplementationSpecific', backend: { service: { name: 'web', port: { name: 'http' } } } }] } },
      { http: { paths: [{ path: '/exact', pathType: 'Exact', backend: { service: { name: 'web', port: { number: 80 } } } }] } },
    ],
  },
  status: { loadBalancer: { ingress: [{ ip: '192.0.2.20', ports: [{ port: 443, protocol: 'TCP', error: 'none' }] }, { hostname: 'lb.example' }] } },
};
