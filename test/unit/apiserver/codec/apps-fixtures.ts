/** Representative apps/v1 objects (StatefulSet, DaemonSet, ControllerRevision, Deployment, ReplicaSet) and the autoscaling/v1 Scale, for the protobuf and CBOR tests. */

const meta = (name: string, namespace: string) => ({ name, namespace, uid: `uid-${name}`, resourceVersion: '42', creationTimestamp: '2025-03-01T12:00:00Z', generation: 2 });

const template = {
  metadata: { labels: { app: 'web' }, annotations: { note: 'x' } },
  spec: {
    containers: [{ name: 'app', image: 'nginx:1.27', volumeMounts: [{ name: 'www', mountPath: '/usr/share/nginx/html' }], resources: { requests: { cpu: '100m' } } }],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    schedulerName: 'default-scheduler',
    securityContext: {},
  },
};

export const statefulSetFixture = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: meta('web', 'shop'),
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'web' } },
    template,
    volumeClaimTemplates: [
      {
        // No apiVersion/kind: protobuf carries a claim template without them (upstream's message has no TypeMeta).
        metadata: { name: 'www' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' },
        status: { phase: 'Pending' },
      },
    ],
    serviceName: 'web',
    podManagementPolicy: 'Parallel',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: '50%' } },
    revisionHistoryLimit: 10,
    minReadySeconds: 5,
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    ordinals: { start: 0 },
  },
  status: {
    observedGeneration: 2,
    replicas: 0,
    readyReplicas: 1,
    currentReplicas: 1,
    updatedReplicas: 1,
    currentRevision: 'web-7b9c5d',
    updateRevision: 'web-6f4d8c',
    collisionCount: 0,
    conditions: [{ type: 'Unhealthy', status: 'False', lastTransitionTime: '2025-03-01T12:00:20Z', reason: 'Ok', message: 'fine' }],
    availableReplicas: 0,
  },
};

export const daemonSetFixture = {
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { ...meta('agent', 'kube'), annotations: { 'deprecated.daemonset.template.generation': '2' } },
  spec: {
    selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
    template,
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
    minReadySeconds: 3,
    revisionHistoryLimit: 0,
  },
  status: {
    currentNumberScheduled: 0,
    numberMisscheduled: 0,
    desiredNumberScheduled: 3,
    numberReady: 0,
    observedGeneration: 2,
    updatedNumberScheduled: 1,
    numberAvailable: 2,
    numberUnavailable: 1,
    collisionCount: 1,
    conditions: [{ type: 'Degraded', status: 'True', lastTransitionTime: '2025-03-01T12:00:20Z', reason: 'NodeGone', message: 'node-3' }],
  },
};

export const controllerRevisionFixture = {
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: {
    ...meta('web-7b9c5d', 'shop'),
    labels: { app: 'web', 'controller-revision-hash': '7b9c5d' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true }],
  },
  data: { spec: { template: { $patch: 'replace', metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } } } },
  revision: 0,
};

// Deployment, ReplicaSet and the autoscaling/v1 Scale of their scale sub-resource.

const deployMeta = (name: string, namespace: string) => ({
  name,
  namespace,
  uid: `uid-${name}`,
  resourceVersion: '42',
  generation: 4,
  creationTimestamp: '2025-03-01T12:00:00Z',
  labels: { app: 'web' },
  annotations: { 'deployment.kubernetes.io/revision': '3' },
});

const deployTemplate = {
  metadata: { labels: { app: 'web', 'pod-template-hash': '5d8c9fbb7' }, annotations: { 'kubectl.kubernetes.io/restartedAt': '2025-03-01T12:00:00Z' } },
  spec: {
    containers: [{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }], imagePullPolicy: 'IfNotPresent' }],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
  },
};

export const deploymentFixture = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: deployMeta('web', 'shop'),
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] },
    template: deployTemplate,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
    minReadySeconds: 5,
    revisionHistoryLimit: 0,
    paused: true,
    progressDeadlineSeconds: 600,
  },
  status: {
    observedGeneration: 4,
    replicas: 3,
    updatedReplicas: 2,
    readyReplicas: 2,
    availableReplicas: 1,
    unavailableReplicas: 2,
    conditions: [
      { type: 'Available', status: 'False', lastUpdateTime: '2025-03-01T12:00:05Z', lastTransitionTime: '2025-03-01T12:00:05Z', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' },
      { type: 'Progressing', status: 'True', lastUpdateTime: '2025-03-01T12:00:06Z', lastTransitionTime: '2025-03-01T12:00:01Z', reason: 'ReplicaSetUpdated', message: 'ReplicaSet "web-5d8c9fbb7" is progressing.' },
    ],
    collisionCount: 0,
  },
};

export const replicaSetFixture = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: {
    ...deployMeta('web-5d8c9fbb7', 'shop'),
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true }],
  },
  spec: { replicas: 3, minReadySeconds: 5, selector: { matchLabels: { app: 'web', 'pod-template-hash': '5d8c9fbb7' } }, template: deployTemplate },
  status: {
    // replicas is not omitempty upstream (its zero is written); the other counters are.
    replicas: 0,
    observedGeneration: 4,
    conditions: [{ type: 'ReplicaFailure', status: 'True', lastTransitionTime: '2025-03-01T12:00:05Z', reason: 'FailedCreate', message: 'pods "web-5d8c9fbb7-x" is forbidden: exceeded quota' }],
  },
};

export const scaleFixture = {
  apiVersion: 'autoscaling/v1',
  kind: 'Scale',
  metadata: { name: 'web', namespace: 'shop', uid: 'uid-web', resourceVersion: '42', creationTimestamp: '2025-03-01T12:00:00Z' },
  spec: { replicas: 5 },
  status: { replicas: 0, selector: 'app=web,tier notin (db)' },
};
