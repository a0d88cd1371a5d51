/** Representative apps/v1 objects (StatefulSet, DaemonSet, ControllerRevision) for the protobuf and CBOR tests. */

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
