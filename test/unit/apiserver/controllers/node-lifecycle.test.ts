import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { NodeLifecycleController, type Taint } from '../../../../apiserver/controllers/node-lifecycle';
import { rfc3339 } from '../../../../apiserver/api/time';
import { RecordingRecorder } from '../../../helpers/recording-recorder';
import { adminCtx, openFixture, waitFor, type Fixture } from './store-fixture';

const GRACE = 50_000;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

const nodeType = (f: Fixture) => f.type('', 'v1', 'nodes');
const leaseType = (f: Fixture) => f.type('coordination.svc.io', 'v1', 'leases');

function healthyConditions(f: Fixture, ready = 'True', extra: Record<string, string> = {}): Condition[] {
  const now = rfc3339(f.clock.now());
  return ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({
    type,
    status: extra[type] ?? (type === 'Ready' ? ready : 'False'),
    reason: type === 'Ready' ? 'SvcNodeReady' : 'SvcNodeHasNoPressure',
    message: 'ok',
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  }));
}

/** What the agent does: post status through the status path with a fresh heartbeat. */
async function postStatus(f: Fixture, name: string, conditions: Condition[]): Promise<void> {
  await f.store.update(nodeType(f), '', name, (cur) => ({ ...cur!, status: { ...((cur!.status) ?? {}), conditions } }), { ...adminCtx, subresource: 'status' });
}

async function renewLease(f: Fixture, name: string): Promise<void> {
  const renewTime = f.clock.now().toISOString().replace('Z', '000Z'); // MicroTime
  await f.store.update(
    leaseType(f),
    'svc-node-lease',
    name,
    (cur) => ({
      ...(cur ?? { apiVersion: 'coordination.svc.io/v1', kind: 'Lease', metadata: { name, namespace: 'svc-node-lease' } }),
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
    }),
    adminCtx,
    true,
  );
}

async function registerNode(f: Fixture, name: string, taints?: Taint[]): Promise<void> {
  await f.store.create(nodeType(f), '', { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: taints ? { taints } : {} }, adminCtx);
  await postStatus(f, name, healthyConditions(f));
  await renewLease(f, name);
}

async function node(f: Fixture, name: string): Promise<KObject> {
  return f.store.get(nodeType(f), '', name);
}

function conditionsOf(n: KObject): Condition[] {
  return ((n.status as { conditions?: Condition[] } | undefined)?.conditions ?? []);
}

function taintsOf(n: KObject): Taint[] {
  return ((n.spec as { taints?: Taint[] } | undefined)?.taints ?? []);
}

function taintIds(n: KObject): string[] {
  return taintsOf(n).map((t) => `${t.key}:${t.effect}`).sort();
}

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const f = await openFixture();
  t.teardown(() => f.close());
  const recorder = new RecordingRecorder();
  const c = new NodeLifecycleController(f.store, f.cache, f.registry, { gracePeriodMs: GRACE, now: f.clock.now, log: f.log, recorder });
  return { f, c, recorder };
}

test('a node that keeps renewing its Lease stays Ready, even when its status heartbeat is old', async (t) => {
  const { f, c } = await setup(t);
  await registerNode(f, 'n1');
  await c.monitor();
  for (let i = 0; i < 6; i++) {
    f.clock.advance(20_000);
    await renewLease(f, 'n1');
    await c.monitor();
  }
  const n = await node(f, 'n1');
  t.true(conditionsOf(n).every((x) => x.status !== 'Unknown'));
  t.deepEqual(taintIds(n), []);
});

test('a silent node goes Unknown after the grace period, is tainted unreachable, and heals when it reports Ready again', async (t) => {
  const { f, c } = await setup(t);
  await registerNode(f, 'n1', [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]);
  await c.monitor();
  f.clock.advance(GRACE);
  await c.monitor();
  t.true(conditionsOf(await node(f, 'n1')).every((x) => x.status !== 'Unknown'), 'exactly the grace period is not yet too late');

  f.clock.advance(1_000);
  const markedAt = rfc3339(f.clock.now());
  await c.monitor();
  const n = await node(f, 'n1');
  const conds = conditionsOf(n);
  t.deepEqual(conds.map((x) => `${x.type}=${x.status}`), ['Ready=Unknown', 'MemoryPressure=Unknown', 'DiskPressure=Unknown', 'PIDPressure=Unknown']);
  for (const x of conds) {
    t.is(x.reason, 'NodeStatusUnknown');
    t.is(x.message, 'svc-node stopped posting node status.');
    t.is(x.lastTransitionTime, markedAt);
    t.is(x.lastHeartbeatTime, '2025-03-01T12:00:00Z', 'the node\'s own heartbeat time is kept');
  }
  t.deepEqual(taintIds(n), ['dedicated:NoSchedule', 'node.svc.io/unreachable:NoExecute', 'node.svc.io/unreachable:NoSchedule']);
  const noExecute = taintsOf(n).find((x) => x.effect === 'NoExecute')!;
  t.is(noExecute.timeAdded, markedAt);

  // Another pass changes nothing (no churn).
  const rv = n.metadata.resourceVersion;
  f.clock.advance(5_000);
  await c.monitor();
  t.is((await node(f, 'n1')).metadata.resourceVersion, rv);

  // The agent comes back: Lease renewed and Ready True posted.
  f.clock.advance(5_000);
  await renewLease(f, 'n1');
  await postStatus(f, 'n1', healthyConditions(f));
  await c.monitor();
  const healed = await node(f, 'n1');
  t.deepEqual(taintIds(healed), ['dedicated:NoSchedule']);
  t.true(conditionsOf(healed).every((x) => x.status !== 'Unknown'));
});

test('the Lease alone keeps a node alive; status heartbeats alone do too', async (t) => {
  const { f, c } = await setup(t);
  await registerNode(f, 'lease-only');
  await registerNode(f, 'status-only');
  await c.monitor();
  for (let i = 0; i < 4; i++) {
    f.clock.advance(30_000);
    await renewLease(f, 'lease-only');
    await postStatus(f, 'status-only', healthyConditions(f));
    await c.monitor();
  }
  t.is(conditionsOf(await node(f, 'lease-only'))[0].status, 'True');
  t.is(conditionsOf(await node(f, 'status-only'))[0].status, 'True');
});

test('a node reporting Ready False is tainted not-ready (NoExecute and NoSchedule); pressure conditions add NoSchedule taints', async (t) => {
  const { f, c } = await setup(t);
  await registerNode(f, 'sick');
  await postStatus(f, 'sick', healthyConditions(f, 'False', { MemoryPressure: 'True' }));
  await c.monitor();
  const n = await node(f, 'sick');
  t.deepEqual(taintIds(n), ['node.svc.io/memory-pressure:NoSchedule', 'node.svc.io/not-ready:NoExecute', 'node.svc.io/not-ready:NoSchedule']);
  t.is(conditionsOf(n)[0].status, 'False', 'a reported False is not overwritten');

  // False → Unknown after silence: not-ready swaps to unreachable.
  f.clock.advance(GRACE + 1_000);
  await c.monitor();
  t.deepEqual(taintIds(await node(f, 'sick')), ['node.svc.io/unreachable:NoExecute', 'node.svc.io/unreachable:NoSchedule']);
});

test('spec.unschedulable adds the unschedulable NoSchedule taint', async (t) => {
  const { f, c } = await setup(t);
  await registerNode(f, 'cordoned');
  await f.store.update(nodeType(f), '', 'cordoned', (cur) => ({ ...cur!, spec: { unschedulable: true } }), adminCtx);
  await c.monitor();
  t.deepEqual(taintIds(await node(f, 'cordoned')), ['node.svc.io/unschedulable:NoSchedule']);
});

test('a node that never posted status gets Unknown conditions (NodeStatusNeverUpdated) after the grace period', async (t) => {
  const { f, c } = await setup(t);
  await f.store.create(nodeType(f), '', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'mute' } }, adminCtx);
  await c.monitor();
  f.clock.advance(GRACE + 1_000);
  await c.monitor();
  const n = await node(f, 'mute');
  t.deepEqual(conditionsOf(n).map((x) => `${x.type}=${x.status}:${x.reason}`), [
    'Ready=Unknown:NodeStatusNeverUpdated',
    'MemoryPressure=Unknown:NodeStatusNeverUpdated',
    'DiskPressure=Unknown:NodeStatusNeverUpdated',
    'PIDPressure=Unknown:NodeStatusNeverUpdated',
  ]);
  t.deepEqual(taintIds(n), ['node.svc.io/unreachable:NoExecute', 'node.svc.io/unreachable:NoSchedule']);
});

test('judged by the controller\'s clock: a node whose own clock lags still counts as alive while it renews', async (t) => {
  const { f, c } = await setup(t);
  // Everything the agent writes carries its clock, two minutes behind the controller's.
  const asAgent = async (fn: () => Promise<void>) => {
    const real = f.clock.ms;
    f.clock.ms = real - 120_000;
    try {
      await fn();
    } finally {
      f.clock.ms = real;
    }
  };
  await asAgent(() => registerNode(f, 'skewed'));
  await c.monitor();
  for (let i = 0; i < 4; i++) {
    f.clock.advance(30_000);
    await asAgent(() => renewLease(f, 'skewed'));
    await c.monitor();
  }
  t.is(conditionsOf(await node(f, 'skewed'))[0].status, 'True');
});

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

test('running: a Node event heals taints without waiting for the next pass', async (t) => {
  const { f } = await setup(t);
  await registerNode(f, 'n1');
  // One pass at start, then passes only when the test says so.
  let wake: (() => void) | undefined;
  const sleep = (_ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      wake = resolve;
      signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    });
  const c = new NodeLifecycleController(f.store, f.cache, f.registry, { gracePeriodMs: GRACE, now: f.clock.now, log: f.log, sleep });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
  });
  await until(() => wake !== undefined);
  f.clock.advance(GRACE + 1_000);
  wake!();
  await waitFor(f, nodeType(f), '', 'n1', (o) => o !== null && taintIds(o).includes('node.svc.io/unreachable:NoExecute'));
  // The agent reports Ready again; no monitor pass runs (sleep never resolves), the watch does it.
  await postStatus(f, 'n1', healthyConditions(f));
  const healed = await waitFor(f, nodeType(f), '', 'n1', (o) => o !== null && taintIds(o).length === 0);
  t.deepEqual(taintIds(healed!), []);
  t.true(f.lines.some((l) => l.includes('conditions set to Unknown')));
});

test('events: RegisteredNode when first seen, NodeNotReady on the node and its pods (Ready turned False) when it goes silent, RemovingNode when it goes', async (t) => {
  const { f, c, recorder } = await setup(t);
  await registerNode(f, 'n1');
  const pods = f.type('', 'v1', 'pods');
  const pod = (name: string, ready: string) =>
    f.store
      .create(pods, 'ns', { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox:1.36' }] } }, adminCtx)
      .then(() => f.store.update(pods, 'ns', name, (cur) => ({ ...cur!, status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready, reason: ready === 'True' ? undefined : 'ContainersNotReady' }] } }), { ...adminCtx, subresource: 'status' }));
  await pod('ready', 'True');
  await pod('not-ready', 'False');
  await c.monitor();
  const n1 = await node(f, 'n1');
  t.deepEqual(recorder.events, [{ regarding: { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: n1.metadata.uid }, type: 'Normal', reason: 'RegisteredNode', message: 'Node n1 event: Registered Node n1 in Controller' }]);
  f.clock.advance(GRACE + 1);
  await c.monitor();
  t.deepEqual(recorder.lines().slice(1), ['NodeNotReady: Node n1 status is now: NodeNotReady', 'NodeNotReady: Node is not ready']);
  t.like(recorder.events[2], { type: 'Warning', regarding: { kind: 'Pod', namespace: 'ns', name: 'ready' } });
  const ready = ((await f.store.get(pods, 'ns', 'ready')).status as { conditions: Condition[] }).conditions[0];
  t.like(ready, { type: 'Ready', status: 'False' });
  f.clock.advance(10_000);
  await c.monitor();
  t.is(recorder.events.length, 3, 'once per transition');
  await f.store.delete(nodeType(f), '', 'n1', {}, adminCtx);
  await c.monitor();
  t.deepEqual(recorder.lines().slice(3), ['RemovingNode: Node n1 event: Removing Node n1 from Controller']);
});
