/**
 * Node-side admission: the pure checks (upstream's reasons and messages), and the PodManager on the
 * simulator refusing a pod beyond maxPods (phase Failed, OutOfpods, no sandbox) or on a node whose
 * NoExecute taint it does not tolerate, while admitted pods run.
 */
import test from 'ava';
import { nodesResource } from '../../../../agent/client/resources';
import { admitPod, type AdmissionNode } from '../../../../agent/pod/admission';
import type { Container, Pod, PodSpec } from '../../../../agent/api/core-v1';
import { BUSYBOX, isRunningReady, NODE, startHarness } from './harness';

const node: AdmissionNode = {
  name: 'n1',
  labels: { zone: 'a', disk: 'ssd', gen: '5' },
  taints: [],
  allocatable: { cpuMilli: 2000, memoryBytes: 1024 * 2 ** 20, pods: 3 },
};

function pod(spec: Partial<PodSpec> = {}, resources?: Container['resources']): Pod {
  return { metadata: { name: 'p', namespace: 'default', uid: 'u' }, spec: { containers: [{ name: 'c', image: BUSYBOX, ...(resources ? { resources } : {}) }], ...spec } };
}

test('pods beyond allocatable pods are OutOfpods with upstream message', (t) => {
  t.deepEqual(admitPod(pod(), [pod(), pod()], node), { admit: true });
  t.deepEqual(admitPod(pod(), [pod(), pod(), pod()], node), {
    admit: false,
    reason: 'OutOfpods',
    message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
  });
});

test('cpu and memory requests beyond what is left of allocatable are OutOfcpu / OutOfmemory; limits stand in for missing requests; init containers count by their maximum', (t) => {
  const big = pod({}, { requests: { cpu: '1500m' } });
  t.deepEqual(admitPod(pod({}, { requests: { cpu: '600m' } }), [big], node), {
    admit: false,
    reason: 'OutOfcpu',
    message: "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000",
  });
  t.true(admitPod(pod({}, { requests: { cpu: '500m' } }), [big], node).admit);
  const mem = admitPod(pod({}, { limits: { memory: '2Gi' } }), [], node);
  t.is(mem.admit ? '' : mem.reason, 'OutOfmemory');
  // An init container asking for 1 core next to an app asking for 100m: the pod needs 1 core.
  const withInit = pod({ initContainers: [{ name: 'i', image: BUSYBOX, resources: { requests: { cpu: '1' } } }] }, { requests: { cpu: '100m' } });
  t.true(admitPod(withInit, [], node).admit);
  const r = admitPod(withInit, [pod({}, { requests: { cpu: '1500m' } })], node);
  t.is(r.admit ? '' : r.message, "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000");
  // Pods without requests always fit by resources.
  t.true(admitPod(pod(), [big, big], node).admit);
});

test('nodeSelector and required node affinity against the node labels: NodeAffinity', (t) => {
  const refused = { admit: false, reason: 'NodeAffinity', message: 'Predicate NodeAffinity failed' };
  t.true(admitPod(pod({ nodeSelector: { zone: 'a' } }), [], node).admit);
  t.deepEqual(admitPod(pod({ nodeSelector: { zone: 'b' } }), [], node), refused);
  const affinity = (matchExpressions: object[], matchFields: object[] = []) =>
    pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions, matchFields } as never] } } } });
  t.true(admitPod(affinity([{ key: 'disk', operator: 'In', values: ['ssd', 'nvme'] }, { key: 'gpu', operator: 'DoesNotExist' }]), [], node).admit);
  t.deepEqual(admitPod(affinity([{ key: 'disk', operator: 'NotIn', values: ['ssd'] }]), [], node), refused);
  t.true(admitPod(affinity([{ key: 'gen', operator: 'Gt', values: ['4'] }]), [], node).admit);
  t.deepEqual(admitPod(affinity([{ key: 'gen', operator: 'Lt', values: ['4'] }]), [], node), refused);
  t.true(admitPod(affinity([], [{ key: 'metadata.name', operator: 'In', values: ['n1'] }]), [], node).admit);
  t.deepEqual(admitPod(affinity([], [{ key: 'metadata.name', operator: 'In', values: ['n2'] }]), [], node), refused);
  // Terms are ORed; an empty term matches nothing.
  const terms = pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{}, { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }] } } } });
  t.true(admitPod(terms, [], node).admit);
});

test('an untolerated NoExecute taint is TaintToleration; NoSchedule is left to the scheduler; static pods are exempt', (t) => {
  const tainted: AdmissionNode = { ...node, taints: [{ key: 'maint', value: 'yes', effect: 'NoExecute' }, { key: 'busy', effect: 'NoSchedule' }] };
  t.deepEqual(admitPod(pod(), [], tainted), { admit: false, reason: 'TaintToleration', message: 'Predicate TaintToleration failed' });
  t.true(admitPod(pod({ tolerations: [{ key: 'maint', operator: 'Equal', value: 'yes', effect: 'NoExecute' }] }), [], tainted).admit);
  t.true(admitPod(pod({ tolerations: [{ operator: 'Exists' }] }), [], tainted).admit);
  t.false(admitPod(pod({ tolerations: [{ key: 'maint', operator: 'Equal', value: 'no' }] }), [], tainted).admit);
  t.true(admitPod(pod(), [], tainted, true).admit);
});

test('a toleration in upstream spelling tolerates the node.svc.io taint of the same name, and the reverse (issue 17)', (t) => {
  const notReady: AdmissionNode = { ...node, taints: [{ key: 'node.svc.io/not-ready', effect: 'NoExecute' }] };
  t.true(admitPod(pod({ tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }] }), [], notReady).admit);
  t.false(admitPod(pod({ tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }] }), [], notReady).admit);
  const upstream: AdmissionNode = { ...node, taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] };
  t.true(admitPod(pod({ tolerations: [{ key: 'node.svc.io/unreachable', operator: 'Exists' }] }), [], upstream).admit);
});

const sleeper = (name = 'c'): Container => ({ name, image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] });

test('the agent refuses a pod beyond maxPods: phase Failed with OutOfpods and no sandbox; admitted pods run; a pod deleted frees its place', async (t) => {
  const h = await startHarness({ manager: { maxPods: 2 } });
  try {
    const a = h.createPod('a', { containers: [sleeper()] }, { creationTimestamp: '2025-01-01T00:00:00Z' });
    const b = h.createPod('b', { containers: [sleeper()] }, { creationTimestamp: '2025-01-01T00:00:01Z' });
    t.true(await h.until(() => isRunningReady(h.status('a')) && isRunningReady(h.status('b'))));
    const c = h.createPod('c', { containers: [sleeper()] });
    t.true(await h.until(() => h.status('c')?.phase === 'Failed'));
    const st = h.status('c')!;
    t.is(st.reason, 'OutOfpods');
    t.is(st.message, "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2");
    t.deepEqual(await h.containers(c.metadata.uid!), []);
    t.false(h.sim.sandboxes.some((s) => s.metadata?.uid === c.metadata.uid));
    t.is(h.log.find('pod rejected by node admission').length, 1);
    // Still refused later (it is not looked at again), and the others are untouched.
    await h.clock.advance(5000);
    t.is(h.status('c')?.phase, 'Failed');
    t.true(isRunningReady(h.status('a')));
    t.truthy(a.metadata.uid && b.metadata.uid);
    // Deleting b frees a place for a new pod.
    h.deletePod('b', 0);
    t.true(await h.until(() => h.pod('b') === undefined, 60_000));
    h.createPod('d', { containers: [sleeper()] });
    t.true(await h.until(() => isRunningReady(h.status('d')), 60_000));
  } finally {
    await h.stop();
  }
});

test('the agent reads its Node: a NoExecute taint the pod does not tolerate and a nodeSelector that does not match are refused', async (t) => {
  const h = await startHarness({ manager: { nodeRefreshPeriodMs: 1000 } });
  try {
    h.api.seed(nodesResource, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: NODE, labels: { zone: 'a' } },
      spec: { taints: [{ key: 'maint', effect: 'NoExecute' }] },
      status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } },
    });
    await h.clock.advance(2000);
    h.createPod('plain', { containers: [sleeper()] });
    h.createPod('tolerant', { containers: [sleeper()], tolerations: [{ key: 'maint', operator: 'Exists', effect: 'NoExecute' }] });
    h.createPod('elsewhere', { containers: [sleeper()], nodeSelector: { zone: 'b' }, tolerations: [{ operator: 'Exists' }] });
    t.true(await h.until(() => isRunningReady(h.status('tolerant')) && h.status('plain')?.phase === 'Failed' && h.status('elsewhere')?.phase === 'Failed'));
    t.is(h.status('plain')?.reason, 'TaintToleration');
    t.is(h.status('elsewhere')?.reason, 'NodeAffinity');
  } finally {
    await h.stop();
  }
});

test('the pod overhead its RuntimeClass set counts with its requests, as upstream\'s', (t) => {
  const big = pod({}, { requests: { cpu: '1500m' } });
  t.true(admitPod(pod({}, { requests: { cpu: '500m' } }), [big], node).admit);
  t.deepEqual(admitPod(pod({ overhead: { cpu: '100m' } }, { requests: { cpu: '500m' } }), [big], node), {
    admit: false,
    reason: 'OutOfcpu',
    message: "Node didn't have enough resource: cpu, requested: 600, used: 1500, capacity: 2000",
  });
  // The overhead of pods already admitted counts too.
  t.false(admitPod(pod({}, { requests: { cpu: '400m' } }), [pod({ overhead: { cpu: '200m' } }, { requests: { cpu: '1500m' } })], node).admit);
});
