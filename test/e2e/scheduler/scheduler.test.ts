import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call, type JsonResponse } from '../../helpers/http';

// The scheduler, pods/binding and NoExecute eviction in a real svc-apiserver process (issue 4
// point 6), with fake Node objects registered through the API: no agent runs, so nodes are Ready
// because their status says so, and the grace period is long enough that they stay so.
let s: RunningApiServer;
test.before(async () => {
  s = await startApiServer({ args: ['--node-monitor-grace-period=10m'] });
  const ns = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces`, { metadata: { name: 'sched' } });
  if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
  for (const n of [
    node('small', { cpu: '1', memory: '2Gi', pods: '20' }),
    node('gpu', { cpu: '4', memory: '8Gi', pods: '20', 'vendor.example/gpu': '2' }, { accel: 'gpu' }),
    node('infra', { cpu: '4', memory: '8Gi', pods: '20' }, {}, [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }]),
  ]) {
    const r = await call(s.admin, 'POST', `${s.url}/api/v1/nodes`, n);
    if (r.status !== 201) throw new Error(`node: ${r.status} ${r.text}`);
  }
});
test.after.always(async () => {
  await s?.stop();
});

function node(name: string, allocatable: Record<string, string>, labels: Record<string, string> = {}, taints?: unknown[]) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'svc.io/hostname': name, ...labels } },
    spec: taints ? { taints } : {},
    status: {
      capacity: allocatable,
      allocatable,
      conditions: [{ type: 'Ready', status: 'True', reason: 'SvcNodeReady', message: 'fake node', lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }],
    },
  };
}

async function createPod(name: string, spec: Record<string, unknown> = {}, requests?: Record<string, string>): Promise<void> {
  const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/sched/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'busybox:1.36', ...(requests ? { resources: { requests } } : {}) }], ...spec },
  });
  if (r.status !== 201) throw new Error(`pod ${name}: ${r.status} ${r.text}`);
}

const getPod = (name: string) => call(s.admin, 'GET', `${s.url}/api/v1/namespaces/sched/pods/${name}`);

/** Polls the pod until pred holds; fails (with the last answer) after a generous deadline. */
async function until(name: string, pred: (r: JsonResponse) => boolean, what: string): Promise<JsonResponse> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await getPod(name);
    if (pred(r)) return r;
    if (Date.now() > deadline) throw new Error(`pod ${name} never ${what}: ${r.status} ${r.text}\n${s.output()}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

const boundTo = (name: string) => until(name, (r) => !!r.body?.spec?.nodeName, 'bound');
const condition = (r: JsonResponse, type: string) => (r.body?.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

test.serial('pods created without nodeName are bound to the node that fits', async (t) => {
  await createPod('wants-gpu', {}, { 'vendor.example/gpu': '1' });
  await createPod('selects-gpu', { nodeSelector: { accel: 'gpu' } });
  await createPod('infra-only', {
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' }],
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['infra'] }] }] } } },
  });
  await createPod('no-gpu-zone', {
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'accel', operator: 'DoesNotExist' }] }] } } },
  }, { cpu: '500m' });
  const gpu = await boundTo('wants-gpu');
  t.is(gpu.body.spec.nodeName, 'gpu');
  t.is(condition(gpu, 'PodScheduled')?.status, 'True');
  t.is((await boundTo('selects-gpu')).body.spec.nodeName, 'gpu');
  t.is((await boundTo('infra-only')).body.spec.nodeName, 'infra');
  // "infra" is tainted and "gpu" excluded: only "small" is left.
  t.is((await boundTo('no-gpu-zone')).body.spec.nodeName, 'small');
});

test.serial('a pod that fits nowhere is Unschedulable with upstream\'s message', async (t) => {
  await createPod('huge', {}, { cpu: '100' });
  const r = await until('huge', (x) => condition(x, 'PodScheduled')?.reason === 'Unschedulable', 'marked Unschedulable');
  const c = condition(r, 'PodScheduled');
  t.is(c.status, 'False');
  t.is(c.message, '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: infra}, 2 Insufficient cpu.');
  t.is(r.body.spec.nodeName, undefined);
});

test.serial('pods/binding binds a pod once; a second binding is 409', async (t) => {
  await createPod('manual', { schedulerName: 'by-hand' });
  const binding = (node: string) => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'manual', namespace: 'sched' }, target: { apiVersion: 'v1', kind: 'Node', name: node } });
  const url = `${s.url}/api/v1/namespaces/sched/pods/manual/binding`;
  const ok = await call(s.admin, 'POST', url, binding('small'));
  t.is(ok.status, 201, ok.text);
  t.is(ok.body.status, 'Success');
  const again = await call(s.admin, 'POST', url, binding('gpu'));
  t.is(again.status, 409);
  t.is(again.body.message, 'Operation cannot be fulfilled on pods/binding "manual": pod manual is already assigned to node "small"');
  const p = await getPod('manual');
  t.is(p.body.spec.nodeName, 'small');
  t.is(condition(p, 'PodScheduled')?.status, 'True');
});

test.serial('a NoExecute taint evicts the pods that do not tolerate it', async (t) => {
  const onSmall = { nodeSelector: { 'svc.io/hostname': 'small' }, terminationGracePeriodSeconds: 0 };
  await createPod('victim', onSmall);
  await createPod('survivor', { ...onSmall, tolerations: [{ key: 'maintenance', operator: 'Exists', effect: 'NoExecute' }] });
  t.is((await boundTo('victim')).body.spec.nodeName, 'small');
  t.is((await boundTo('survivor')).body.spec.nodeName, 'small');
  const patch = await call(s.admin, 'PATCH', `${s.url}/api/v1/nodes/small`, { spec: { taints: [{ key: 'maintenance', value: 'kernel', effect: 'NoExecute' }] } }, { 'content-type': 'application/merge-patch+json' });
  t.is(patch.status, 200, patch.text);
  // terminationGracePeriodSeconds 0: the eviction's delete removes the pod outright.
  await until('victim', (r) => r.status === 404, 'evicted');
  // no-gpu-zone (bound to small earlier, no toleration) went with the same node event.
  await until('no-gpu-zone', (r) => r.status === 404 || !!r.body?.metadata?.deletionTimestamp, 'evicted');
  const kept = await getPod('survivor');
  t.is(kept.status, 200);
  t.is(kept.body.metadata.deletionTimestamp, undefined);
  // Pending pods are not scheduled onto the tainted node either.
  await createPod('after-taint', { nodeSelector: { 'svc.io/hostname': 'small' } });
  const r = await until('after-taint', (x) => condition(x, 'PodScheduled')?.reason === 'Unschedulable', 'marked Unschedulable');
  t.is(
    condition(r, 'PodScheduled').message,
    "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: infra}, 1 node(s) had untolerated taint {maintenance: kernel}.",
  );
});
