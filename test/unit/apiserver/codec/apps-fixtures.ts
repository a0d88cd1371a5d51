/** Representative apps/v1 objects and the autoscaling/v1 Scale, for the protobuf tests. */

const meta = (name: string, namespace: string) => ({
  name,
  namespace,
  uid: `uid-${name}`,
  resourceVersion: '42',
  generation: 4,
  creationTimestamp: '2025-03-01T12:00:00Z',
  labels: { app: 'web' },
  annotations: { 'deployment.kubernetes.io/revision': '3' },
});

const template = {
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
  metadata: meta('web', 'shop'),
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] },
    template,
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
    ...meta('web-5d8c9fbb7', 'shop'),
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true }],
  },
  spec: { replicas: 3, minReadySeconds: 5, selector: { matchLabels: { app: 'web', 'pod-template-hash': '5d8c9fbb7' } }, template },
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
