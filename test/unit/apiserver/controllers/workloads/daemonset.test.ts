import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { DaemonSetController } from '../../../../../apiserver/controllers/workloads/daemonset-controller';
import { addDaemonTolerations, shouldRunOn, targetNodeName } from '../../../../../apiserver/controllers/workloads/daemonset-placement';
import type { FakeTimers } from '../../scheduler/fake-timers';
import { adminCtx, openFixture, type Fixture } from '../store-fixture';
import { fakeClock, list, RecordingRecorder, setPodStatus, until } from './harness';

const NS = 'kube';

interface Ctx {
  f: Fixture;
  recorder: RecordingRecorder;
  timers: FakeTimers;
}

async function setup(t: { teardown(fn: () => Promise<void>): void }, nodes: KObject[]): Promise<Ctx> {
  const f = await openFixture();
  for (const n of nodes) await f.store.create(f.type('', 'v1', 'nodes'), '', n, adminCtx);
  const recorder = new RecordingRecorder();
  const { clock, timers } = fakeClock(f);
  const c = new DaemonSetController(f.store, f.cache, f.registry, { log: f.log, recorder, clock });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
    await f.close();
  });
  return { f, recorder, timers };
}

function node(name: string, o: { labels?: Record<string, string>; taints?: unknown[]; unschedulable?: boolean } = {}): KObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...o.labels } }, spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) } };
}

function daemonSet(name: string, spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}): KObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'agent', image: 'agent:1' }], ...podSpec } }, ...spec },
  };
}

const dsType = (f: Fixture) => f.type('apps', 'v1', 'daemonsets');
const pods = (f: Fixture) => list(f, '', 'pods', NS);
const onNodes = async (f: Fixture) => (await pods(f)).map((p) => targetNodeName(p)).sort();
const getDs = (f: Fixture, name: string) => f.store.get(dsType(f), NS, name);
const statusOf = (o: KObject) => (o.status ?? {}) as Record<string, any>;
const statusIs = (f: Fixture, name: string, pred: (s: Record<string, any>) => boolean, what: string) => until(f, async () => { const o = await getDs(f, name); return pred(statusOf(o)) && o; }, what);
const nodesAre = (f: Fixture, want: string[]) => until(f, async () => JSON.stringify(await onNodes(f)) === JSON.stringify(want), `daemon pods on ${want.join(',')}`);

async function updateNode(f: Fixture, name: string, change: (n: KObject) => void): Promise<void> {
  await f.store.update(f.type('', 'v1', 'nodes'), '', name, (cur) => (change(cur!), cur!), adminCtx);
}

async function readyAll(f: Fixture): Promise<void> {
  for (const p of await pods(f)) if ((p.status as any)?.phase !== 'Running' && !p.metadata.deletionTimestamp) await setPodStatus(f, NS, p.metadata.name!);
}

test('daemon tolerations and eligibility as upstream NodeShouldRunDaemonPod', (t) => {
  const spec: Record<string, any> = { hostNetwork: true, tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }] };
  addDaemonTolerations(spec);
  t.deepEqual(
    spec.tolerations.map((x: any) => `${x.key}:${x.effect}`),
    ['node.svc.io/not-ready:NoExecute', 'node.svc.io/unreachable:NoExecute', 'node.svc.io/disk-pressure:NoSchedule', 'node.svc.io/memory-pressure:NoSchedule', 'node.svc.io/pid-pressure:NoSchedule', 'node.svc.io/unschedulable:NoSchedule', 'node.svc.io/network-unavailable:NoSchedule'],
  );
  t.is(spec.tolerations[0].tolerationSeconds, undefined, 'the user toleration of the same taint is replaced');
  const ds = daemonSet('x', {}, { nodeSelector: { role: 'edge' } });
  t.deepEqual(shouldRunOn(node('a', { labels: { role: 'edge' } }), ds), { shouldRun: true, shouldContinueRunning: true });
  t.deepEqual(shouldRunOn(node('b'), ds), { shouldRun: false, shouldContinueRunning: false });
  const edge = { labels: { role: 'edge' } };
  t.deepEqual(shouldRunOn(node('c', { ...edge, taints: [{ key: 'gpu', effect: 'NoSchedule' }] }), ds), { shouldRun: false, shouldContinueRunning: true });
  t.deepEqual(shouldRunOn(node('d', { ...edge, taints: [{ key: 'gpu', effect: 'NoExecute' }] }), ds), { shouldRun: false, shouldContinueRunning: false });
  // Taints the daemon tolerations cover, in either spelling: not ready (NoExecute), cordoned, under memory pressure.
  const covered = [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }, { key: 'node.svc.io/unschedulable', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }];
  t.deepEqual(shouldRunOn(node('e', { ...edge, taints: covered }), ds), { shouldRun: true, shouldContinueRunning: true });
  t.false(shouldRunOn(node('f', { ...edge, taints: [{ key: 'node.svc.io/network-unavailable', effect: 'NoSchedule' }] }), ds).shouldRun, 'network-unavailable is tolerated only by hostNetwork pods');
  const affinity = daemonSet('y', {}, { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }] } } } });
  t.true(shouldRunOn(node('g', { labels: { zone: 'z1' } }), affinity).shouldRun);
  t.false(shouldRunOn(node('h', { labels: { zone: 'z2' } }), affinity).shouldRun);
  t.false(shouldRunOn(node('i'), daemonSet('z', {}, { nodeName: 'other' })).shouldRun);
});

test('one pod per eligible node, pinned by a required matchFields affinity; a tainted node and an unselected node are skipped; status counts', async (t) => {
  const { f, recorder } = await setup(t, [node('n1'), node('n2'), node('n3', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }), node('n4', { labels: { os: 'other' } })]);
  const ds = await f.store.create(dsType(f), NS, daemonSet('agent', {}, { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'os', operator: 'DoesNotExist' }] }] } } } }), adminCtx);
  await nodesAre(f, ['n1', 'n2']);
  const [pod] = (await pods(f)).filter((p) => targetNodeName(p) === 'n1');
  t.regex(pod.metadata.name!, /^agent-[a-z0-9]{5}$/);
  t.deepEqual((pod.spec as any).affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] });
  t.is((pod.spec as any).nodeName, undefined, 'the scheduler binds it');
  t.true((pod.spec as any).tolerations.some((x: any) => x.key === 'node.svc.io/unschedulable'));
  const [rev] = await list(f, 'apps', 'controllerrevisions', NS);
  t.like(pod.metadata.labels, { app: 'agent', 'controller-revision-hash': rev.metadata.labels?.['controller-revision-hash'], 'pod-template-generation': '1' });
  t.is(rev.metadata.name, `agent-${rev.metadata.labels?.['controller-revision-hash']}`);
  t.is(rev.revision, 1);
  t.is(pod.metadata.ownerReferences?.[0].uid, ds.metadata.uid);
  await statusIs(f, 'agent', (s) => s.desiredNumberScheduled === 2 && s.currentNumberScheduled === 2 && s.numberReady === 0 && s.numberUnavailable === 2 && s.observedGeneration === 1, 'two scheduled, none ready');
  await readyAll(f);
  const s = statusOf(await statusIs(f, 'agent', (x) => x.numberReady === 2, 'two ready'));
  t.like(s, { desiredNumberScheduled: 2, currentNumberScheduled: 2, numberReady: 2, numberAvailable: 2, updatedNumberScheduled: 2, numberMisscheduled: 0 });
  t.false('numberUnavailable' in s, 'a zero omitempty count is left out, as upstream');
  t.is(recorder.messages('SuccessfulCreate').length, 2);
  t.true(recorder.messages('SuccessfulCreate')[0].startsWith('Created pod: agent-'));
  // A new node gets its pod; the tainted node tolerating nothing never does.
  await f.store.create(f.type('', 'v1', 'nodes'), '', node('n5'), adminCtx);
  await nodesAre(f, ['n1', 'n2', 'n5']);
});

test('pods leave nodes that stop being eligible: a NoExecute taint or a label change; a NoSchedule taint leaves it misscheduled', async (t) => {
  const { f } = await setup(t, [node('a', { labels: { role: 'edge' } }), node('b', { labels: { role: 'edge' } }), node('c', { labels: { role: 'edge' } })]);
  await f.store.create(dsType(f), NS, daemonSet('edge', {}, { nodeSelector: { role: 'edge' } }), adminCtx);
  await nodesAre(f, ['a', 'b', 'c']);
  await updateNode(f, 'a', (n) => ((n.spec as any).taints = [{ key: 'evict', effect: 'NoExecute' }]));
  await nodesAre(f, ['b', 'c']);
  await updateNode(f, 'b', (n) => (n.metadata.labels!.role = 'core'));
  await nodesAre(f, ['c']);
  await updateNode(f, 'c', (n) => ((n.spec as any).taints = [{ key: 'soft', effect: 'NoSchedule' }]));
  const s = statusOf(await statusIs(f, 'edge', (x) => x.numberMisscheduled === 1 && x.desiredNumberScheduled === 0, 'c counted misscheduled'));
  t.like(s, { desiredNumberScheduled: 0, currentNumberScheduled: 0 });
  t.deepEqual(await onNodes(f), ['c']);
});

test('a cordoned node still gets its daemon pod (the unschedulable toleration), and a pod of a deleted node is removed', async (t) => {
  const { f } = await setup(t, [node('n1', { unschedulable: true, taints: [{ key: 'node.svc.io/unschedulable', effect: 'NoSchedule' }] }), node('n2')]);
  await f.store.create(dsType(f), NS, daemonSet('cordon'), adminCtx);
  await nodesAre(f, ['n1', 'n2']);
  await f.store.delete(f.type('', 'v1', 'nodes'), '', 'n2', {}, adminCtx);
  await nodesAre(f, ['n1']);
  t.deepEqual(await onNodes(f), ['n1']);
});

test('RollingUpdate maxUnavailable 1: one node at a time, the next after the new pod is available', async (t) => {
  const { f } = await setup(t, [node('n1'), node('n2'), node('n3')]);
  await f.store.create(dsType(f), NS, daemonSet('roll'), adminCtx);
  await nodesAre(f, ['n1', 'n2', 'n3']);
  await readyAll(f);
  await statusIs(f, 'roll', (s) => s.numberAvailable === 3, 'three available');
  await f.store.update(dsType(f), NS, 'roll', (cur) => (((cur!.spec as any).template.spec.containers[0].image = 'agent:2'), cur!), adminCtx);
  const image = (p: KObject) => (p.spec as any).containers[0].image;
  const counts = async () => {
    const all = (await pods(f)).filter((p) => !p.metadata.deletionTimestamp);
    return { newPods: all.filter((p) => image(p) === 'agent:2'), old: all.filter((p) => image(p) === 'agent:1') };
  };
  for (let step = 1; step <= 3; step++) {
    // The new pod of this step appears (its node's old pod gone); never more than one node without an available pod.
    const { newPods } = await until(f, async () => { const c = await counts(); return c.newPods.length === step && c.old.length === 3 - step && c; }, `step ${step}`);
    const notReady = newPods.filter((p) => (p.status as any)?.phase !== 'Running');
    t.is(notReady.length, 1);
    await setPodStatus(f, NS, notReady[0].metadata.name!);
  }
  const s = statusOf(await statusIs(f, 'roll', (x) => x.updatedNumberScheduled === 3 && x.numberAvailable === 3, 'rolled'));
  t.is(s.observedGeneration, 2);
  const ds = await getDs(f, 'roll');
  t.is(ds.metadata.annotations?.['deprecated.daemonset.template.generation'], '2');
  t.true((await pods(f)).every((p) => p.metadata.labels?.['pod-template-generation'] === '2'));
  t.deepEqual((await list(f, 'apps', 'controllerrevisions', NS)).map((r) => r.revision).sort(), [1, 2]);
});

test('RollingUpdate maxSurge: the new pod starts beside the old one, which goes once the new one is available', async (t) => {
  const { f } = await setup(t, [node('n1'), node('n2')]);
  await f.store.create(dsType(f), NS, daemonSet('surge', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } }), adminCtx);
  await nodesAre(f, ['n1', 'n2']);
  await readyAll(f);
  await statusIs(f, 'surge', (s) => s.numberAvailable === 2, 'two available');
  await f.store.update(dsType(f), NS, 'surge', (cur) => (((cur!.spec as any).template.spec.containers[0].image = 'agent:2'), cur!), adminCtx);
  // One surge pod: three pods, two nodes, both old pods still there.
  await until(f, async () => (await pods(f)).length === 3, 'one surge pod');
  const all = await pods(f);
  const surged = all.find((p) => (p.spec as any).containers[0].image === 'agent:2')!;
  t.is(all.filter((p) => targetNodeName(p) === targetNodeName(surged)).length, 2);
  await setPodStatus(f, NS, surged.metadata.name!);
  // The old pod beside it goes; then the other node surges.
  await until(f, async () => { const p = await pods(f); return p.length === 3 && p.filter((x) => (x.spec as any).containers[0].image === 'agent:2').length === 2; }, 'second surge');
  await readyAll(f);
  await until(f, async () => { const p = await pods(f); return p.length === 2 && p.every((x) => (x.spec as any).containers[0].image === 'agent:2'); }, 'rolled');
  t.deepEqual((await pods(f)).map((x) => (x.spec as any).containers[0].image), ['agent:2', 'agent:2']);
});

test('OnDelete: a template change leaves pods alone; a deleted pod comes back at the new revision', async (t) => {
  const { f } = await setup(t, [node('n1'), node('n2')]);
  await f.store.create(dsType(f), NS, daemonSet('manual', { updateStrategy: { type: 'OnDelete' } }), adminCtx);
  await nodesAre(f, ['n1', 'n2']);
  await readyAll(f);
  await f.store.update(dsType(f), NS, 'manual', (cur) => (((cur!.spec as any).template.spec.containers[0].image = 'agent:2'), cur!), adminCtx);
  await statusIs(f, 'manual', (s) => s.observedGeneration === 2 && s.updatedNumberScheduled === undefined, 'template change observed');
  const victim = (await pods(f)).find((p) => targetNodeName(p) === 'n1')!;
  await f.store.delete(f.type('', 'v1', 'pods'), NS, victim.metadata.name!, {}, adminCtx);
  const back = await until(f, async () => (await pods(f)).find((p) => targetNodeName(p) === 'n1' && p.metadata.uid !== victim.metadata.uid), 'n1 pod made again');
  t.is((back.spec as any).containers[0].image, 'agent:2');
  const other = (await pods(f)).find((p) => targetNodeName(p) === 'n2')!;
  t.is((other.spec as any).containers[0].image, 'agent:1');
});

test('a Failed daemon pod is deleted with a FailedDaemonPod event and made again; a second failure backs off', async (t) => {
  const { f, recorder, timers } = await setup(t, [node('n1')]);
  await f.store.create(dsType(f), NS, daemonSet('flaky'), adminCtx);
  await nodesAre(f, ['n1']);
  const first = (await pods(f))[0];
  await setPodStatus(f, NS, first.metadata.name!, { phase: 'Failed', ready: false });
  const second = await until(f, async () => (await pods(f)).find((p) => p.metadata.uid !== first.metadata.uid), 'replacement');
  t.deepEqual(recorder.messages('FailedDaemonPod'), [`Found failed daemon pod ${NS}/${first.metadata.name} on node n1, will try to kill it`]);
  // Failing again within the back-off (1 s on the controller's clock): kept until the back-off ends.
  await setPodStatus(f, NS, second.metadata.name!, { phase: 'Failed', ready: false });
  // The sync that sees it sets a timer for the end of the back-off (the controller's only timer here).
  for (let i = 0; i < 10 && !timers.delays().includes(1_000); i++) await timers.nextTimer();
  t.true(timers.delays().includes(1_000), 'a retry after the back-off');
  t.deepEqual((await pods(f)).map((p) => p.metadata.uid), [second.metadata.uid]);
  timers.advance(1_000);
  await until(f, async () => (await pods(f)).every((p) => p.metadata.uid !== second.metadata.uid) && (await pods(f)).length === 1, 'second replacement');
  t.is(recorder.messages('FailedDaemonPod').length, 2);
});
