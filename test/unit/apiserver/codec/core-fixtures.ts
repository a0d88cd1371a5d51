/** Representative core/v1 objects (besides Pod) that fill their schemas, for the protobuf tests. */

const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: `uid-${name}`,
  resourceVersion: '42',
  creationTimestamp: '2025-03-01T12:00:00Z',
  labels: { app: name },
});

export const namespaceFixture = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { ...meta('shop'), deletionTimestamp: '2025-03-02T00:00:00Z', finalizers: ['svc.io/x'] },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Terminating', conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'False', lastTransitionTime: '2025-03-02T00:00:01Z', reason: 'ContentDeleted', message: 'done' }] },
};

export const nodeFixture = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: meta('node-1'),
  spec: {
    podCIDR: '10.244.1.0/24',
    podCIDRs: ['10.244.1.0/24', 'fd00:1::/64'],
    providerID: 'svc://node-1',
    unschedulable: true,
    taints: [
      { key: 'svc.io/unschedulable', effect: 'NoSchedule', timeAdded: '2025-03-01T12:00:02Z' },
      { key: 'dedicated', value: 'gpu', effect: 'NoExecute' },
    ],
  },
  status: {
    capacity: { cpu: '4', memory: '16Gi', pods: '110', 'hugepages-2Mi': '0' },
    allocatable: { cpu: '3800m', memory: '15Gi', pods: '110' },
    conditions: [
      { type: 'Ready', status: 'True', lastHeartbeatTime: '2025-03-01T12:05:00Z', lastTransitionTime: '2025-03-01T12:00:30Z', reason: 'KubeletReady', message: 'ready' },
      { type: 'MemoryPressure', status: 'False' },
    ],
    addresses: [
      { type: 'InternalIP', address: '10.0.0.1' },
      { type: 'Hostname', address: 'node-1' },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: 'm',
      systemUUID: 's',
      bootID: 'b',
      kernelVersion: '6.1.0',
      osImage: 'Debian GNU/Linux 12',
      containerRuntimeVersion: 'containerd://1.7',
      kubeletVersion: 'v1.32.0-svc',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
      swap: { capacity: 0 },
    },
    images: [{ names: ['registry.example/app@sha256:abc', 'registry.example/app:1.2'], sizeBytes: 123456789012 }],
    volumesInUse: ['kubernetes.io/csi/x'],
    volumesAttached: [{ name: 'kubernetes.io/csi/x', devicePath: '' }],
    runtimeHandlers: [{ name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: false } }],
    features: { supplementalGroupsPolicy: true },
  },
};

export const configMapFixture = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: meta('settings', 'shop'),
  immutable: false,
  data: { 'app.conf': 'level=debug\nname=ünïcode\n', empty: '' },
  binaryData: { blob: Buffer.from([0, 1, 2, 255, 254, 0x6b, 0x38, 0x73, 0]).toString('base64'), none: '' },
};

export const secretFixture = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: meta('creds', 'shop'),
  immutable: true,
  data: { password: Buffer.from('s3cr3t\u0000\u00ff').toString('base64'), big: Buffer.alloc(300, 7).toString('base64') },
  type: 'Opaque',
};

export const serviceAccountFixture = {
  apiVersion: 'v1',
  kind: 'ServiceAccount',
  metadata: meta('web', 'shop'),
  secrets: [{ name: 'web-token', namespace: 'shop', kind: 'Secret' }],
  imagePullSecrets: [{ name: 'regcred' }],
  automountServiceAccountToken: false,
};

export const serviceFixture = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: meta('web', 'shop'),
  spec: {
    ports: [
      { name: 'http', protocol: 'TCP', port: 80, targetPort: 'http', nodePort: 30080, appProtocol: 'http' },
      { name: 'metrics', protocol: 'TCP', port: 9090, targetPort: 19090 },
    ],
    selector: { app: 'web' },
    clusterIP: '10.96.0.10',
    clusterIPs: ['10.96.0.10', 'fd00:96::10'],
    type: 'LoadBalancer',
    externalIPs: ['192.0.2.1'],
    sessionAffinity: 'ClientIP',
    loadBalancerSourceRanges: ['0.0.0.0/0'],
    externalTrafficPolicy: 'Local',
    healthCheckNodePort: 32000,
    publishNotReadyAddresses: true,
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
    ipFamilies: ['IPv4', 'IPv6'],
    ipFamilyPolicy: 'PreferDualStack',
    allocateLoadBalancerNodePorts: false,
    loadBalancerClass: 'example.com/lb',
    internalTrafficPolicy: 'Cluster',
    trafficDistribution: 'PreferClose',
  },
  status: {
    loadBalancer: { ingress: [{ ip: '192.0.2.10', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP', error: 'none' }] }, { hostname: 'lb.example' }] },
    conditions: [{ type: 'LoadBalancerReady', status: 'True', observedGeneration: 2, lastTransitionTime: '2025-03-01T12:00:03Z', reason: 'Ready', message: '' }],
  },
};

export const endpointsFixture = {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: meta('web', 'shop'),
  subsets: [
    {
      addresses: [{ ip: '10.244.0.5', hostname: 'web-0', nodeName: 'node-1', targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-0', uid: 'u' } }],
      notReadyAddresses: [{ ip: '10.244.0.6' }],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }],
    },
  ],
};

export const coreEventFixture = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata: meta('web-0.1', 'shop'),
  involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-0', uid: 'u', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec.containers{app}' },
  reason: 'Started',
  message: 'Started container app',
  source: { component: 'kubelet', host: 'node-1' },
  firstTimestamp: '2025-03-01T12:00:10Z',
  lastTimestamp: '2025-03-01T12:10:10Z',
  count: 3,
  type: 'Normal',
  eventTime: '2025-03-01T12:00:10.123456Z',
  series: { count: 2, lastObservedTime: '2025-03-01T12:10:10.000001Z' },
  action: 'Started',
  related: { kind: 'Node', name: 'node-1' },
  reportingComponent: 'svc.io/kubelet',
  reportingInstance: 'node-1',
};

export const persistentVolumeFixture = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: meta('pv-1'),
  spec: {
    capacity: { storage: '10Gi' },
    csi: {
      driver: 'csi.example',
      volumeHandle: 'vol-123',
      readOnly: true,
      fsType: 'ext4',
      volumeAttributes: { tier: 'gold' },
      nodeStageSecretRef: { name: 'stage', namespace: 'kube-system' },
    },
    accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
    claimRef: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: 'data', uid: 'c' },
    persistentVolumeReclaimPolicy: 'Retain',
    storageClassName: 'fast',
    mountOptions: ['noatime'],
    volumeMode: 'Filesystem',
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'svc.io/hostname', operator: 'In', values: ['node-1'] }] }] } },
  },
  status: { phase: 'Bound', message: 'bound', reason: 'Bound', lastPhaseTransitionTime: '2025-03-01T12:00:04Z' },
};

export const persistentVolumeClaimFixture = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: meta('data', 'shop'),
  spec: {
    accessModes: ['ReadWriteOnce'],
    selector: { matchLabels: { tier: 'gold' }, matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['c'] }] },
    resources: { requests: { storage: '10Gi' }, limits: { storage: '20Gi' } },
    volumeName: 'pv-1',
    storageClassName: 'fast',
    volumeMode: 'Block',
    dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' },
    dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap', namespace: 'shop' },
  },
  status: {
    phase: 'Bound',
    accessModes: ['ReadWriteOnce'],
    capacity: { storage: '10Gi' },
    conditions: [{ type: 'Resizing', status: 'True', lastProbeTime: '2025-03-01T12:00:06Z', reason: 'r', message: 'm' }],
    allocatedResources: { storage: '10Gi' },
    allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
    modifyVolumeStatus: { targetVolumeAttributesClassName: 'gold', status: 'InProgress' },
  },
};

export const resourceQuotaFixture = {
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: meta('compute', 'shop'),
  spec: {
    hard: { pods: '10', 'requests.cpu': '2', 'limits.memory': '4Gi' },
    scopes: ['NotTerminating'],
    scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high', 'low'] }] },
  },
  status: { hard: { pods: '10', 'requests.cpu': '2', 'limits.memory': '4Gi' }, used: { pods: '3', 'requests.cpu': '750m', 'limits.memory': '1536Mi' } },
};

export const limitRangeFixture = {
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: meta('limits', 'shop'),
  spec: {
    limits: [
      { type: 'Container', max: { cpu: '2' }, min: { cpu: '50m' }, default: { cpu: '500m' }, defaultRequest: { cpu: '100m' }, maxLimitRequestRatio: { cpu: '10' } },
      { type: 'PersistentVolumeClaim', max: { storage: '10Gi' } },
    ],
  },
};
