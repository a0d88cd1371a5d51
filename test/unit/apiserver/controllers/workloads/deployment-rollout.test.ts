import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { rolloutRolling, type RolloutOps } from '../../../../../apiserver/controllers/workloads/deployment-rollout';
import type { DeploymentStatus } from '../../../../../apiserver/controllers/workloads/deployment-status';

const tpl = (image: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } });

function rs(name: string, image: string, spec: number, available: number, created: string): KObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: 'default', uid: name, creationTimestamp: created, generation: 1, annotations: { 'deployment.kubernetes.io/desired-replicas': '4', 'deployment.kubernetes.io/max-replicas': '5' } },
    spec: { replicas: spec, template: tpl(image) },
    status: { replicas: available, readyReplicas: available, availableReplicas: available, observedGeneration: 1 },
  };
}

/** RolloutOps over an in-memory set of ReplicaSets: records the sizes asked for. */
function fakeOps(newRS: KObject, oldRSs: KObject[]): { ops: RolloutOps; scaled: Array<[string, number]> } {
  const scaled: Array<[string, number]> = [];
  const ops: RolloutOps = {
    now: () => Date.parse('2025-03-01T12:00:00Z'),
    replicaSets: () => Promise.resolve({ newRS, oldRSs }),
    scale: (r, size) => {
      scaled.push([r.metadata.name!, size]);
      return Promise.resolve({ ...r, spec: { ...(r.spec as object), replicas: size } });
    },
    deleteReplicaSet: () => Promise.resolve(),
    writeStatus: (_d: KObject, _s: DeploymentStatus) => Promise.resolve(),
    requeueAfter: () => {},
    oldPodsRunning: () => false,
  };
  return { ops, scaled };
}

test('scaling old ReplicaSets down never counts more available pods than a ReplicaSet is asked to keep (a status not yet updated after its scale-down)', async (t) => {
  const d: KObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', uid: 'd', generation: 2 },
    spec: { replicas: 4, template: tpl('v2'), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } },
    status: {},
  };
  // The old ReplicaSet was just scaled from 3 to 2; its controller has deleted a pod but its status
  // still shows 3 available. The new one has 3 asked for, 2 of them available: 4 pods are Ready.
  const old = rs('web-old', 'v1', 2, 3, '2025-03-01T11:00:00Z');
  const fresh = rs('web-new', 'v2', 3, 2, '2025-03-01T11:30:00Z');
  const { ops, scaled } = fakeOps(fresh, [old]);
  await rolloutRolling(ops, d, [old, fresh]);
  // At least replicas - maxUnavailable = 3 must stay available: 2 new + 1 old. Counting the stale 3
  // would take the old one to 0 (2 Ready pods).
  t.deepEqual(scaled, [['web-old', 1]]);
});
