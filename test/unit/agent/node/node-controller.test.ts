/** The node controller: registration first, then the Lease and status loops under one policy (metrics, redial, health). */
import test from 'ava';
import { leasesResource, nodesResource } from '../../../../agent/client/resources';
import { HeartbeatHealth } from '../../../../agent/node/heartbeat-health';
import { type Lease } from '../../../../agent/node/lease-controller';
import { NodeController } from '../../../../agent/node/node-controller';
import { FakeApiClient } from './fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';
import { identity, testStatus } from './fakes/fixtures';
import { MemLog } from './fakes/mem-log';
import { NODE_LEASE_NAMESPACE as leaseNamespace } from '../../../../apiserver/api/well-known';

function setup(o: { registerNode?: boolean } = {}) {
  const client = new FakeApiClient();
  const heartbeatClient = new FakeApiClient();
  const clock = new FakeClock();
  const logs = new Map<string, MemLog>();
  const beats: string[] = [];
  let redials = 0;
  const health = new HeartbeatHealth({ requestTimeoutMs: 10_000 });
  const node = new NodeController({
    client,
    heartbeatClient,
    clock,
    logFor: (component) => {
      if (!logs.has(component)) logs.set(component, new MemLog());
      return logs.get(component)!;
    },
    identity: identity(),
    status: testStatus().source,
    registerNode: o.registerNode ?? true,
    leaseDurationSeconds: 40,
    updateFrequencyMs: 10_000,
    reportFrequencyMs: 300_000,
    health,
    observer: { heartbeat: (kind, ok) => beats.push(`${kind} ${ok}`) },
    onRepeatedFailure: () => {
      redials++;
      return Promise.resolve();
    },
  });
  return { client, heartbeatClient, clock, logs, beats, health, node, redials: () => redials };
}

test('registers with the main client, then renews the Lease (owned by the Node) and posts status with the heartbeat client', async (t) => {
  const s = setup();
  const ac = new AbortController();
  t.true(await s.node.register(ac.signal));
  const registered = s.client.peek(nodesResource, 'node-a')!;
  t.is(s.node.nodeUid, registered.metadata.uid);
  t.is(s.node.renewIntervalMs, 10_000);
  // The heartbeat client is a second view of the same server here: give it the Node.
  s.heartbeatClient.seed(nodesResource, registered);
  let first = false;
  void s.node.whenFirstRenewed().then(() => (first = true));
  const run = s.node.run(ac.signal);
  await s.clock.advance(0);
  t.true(first);
  const lease = s.heartbeatClient.peek<Lease>(leasesResource, 'node-a', leaseNamespace)!;
  t.deepEqual(lease.metadata.ownerReferences?.map((r) => r.uid), [registered.metadata.uid]);
  t.is(s.heartbeatClient.callsOf('patch').filter((c) => c.subresource === 'status').length, 1);
  t.is(s.client.callsOf('create', 'leases').length, 0, 'heartbeats never use the main client');
  t.deepEqual(s.beats.sort(), ['lease true', 'status true']);
  ac.abort();
  await run;
  t.is(s.clock.pending, 0);
});

test('without registerNode nothing is created and a vanished Node is not registered again', async (t) => {
  const s = setup({ registerNode: false });
  const ac = new AbortController();
  t.true(await s.node.register(ac.signal));
  t.is(s.client.calls.length, 0);
  const run = s.node.run(ac.signal);
  await s.clock.advance(0);
  t.is(s.heartbeatClient.peek(nodesResource, 'node-a'), undefined);
  t.deepEqual(s.beats.sort(), ['lease true', 'status false'], 'the status loop fails (no Node), the Lease is still renewed');
  t.is(s.logs.get('node-status')!.find('unable to update node status').length, 1);
  ac.abort();
  await run;
});

test('both loops fail under one policy: each logs to its component, counts and redials on its own schedule, and the health signal watches both', async (t) => {
  const s = setup();
  const ac = new AbortController();
  await s.node.register(ac.signal);
  s.heartbeatClient.seed(nodesResource, s.client.peek(nodesResource, 'node-a')!);
  s.heartbeatClient.down = true;
  const run = s.node.run(ac.signal);
  await s.clock.advance(0);
  await s.clock.advance(200 + 400 + 800);
  await s.clock.advance(20_000 - 1400);
  t.deepEqual(s.logs.get('node-lease')!.find('failed to renew node lease').map((l) => l.obj['retryInMs']).slice(0, 4), [200, 400, 800, 1600]);
  t.is(s.logs.get('node-status')!.find('unable to update node status').length, 3, 'at 0, 10 and 20 s');
  const leaseRedials = s.logs.get('node-lease')!.find('redialing').length;
  const statusRedials = s.logs.get('node-status')!.find('redialing').length;
  t.is(statusRedials, 1);
  t.true(leaseRedials >= 3);
  t.is(s.redials(), leaseRedials + statusRedials, 'one redial callback for both loops');
  t.true(s.beats.includes('lease false') && s.beats.includes('status false'));
  t.true(s.health.healthy(), 'failing loops still make progress');
  s.heartbeatClient.hang = true;
  await s.clock.advance(200_000);
  t.false(s.health.healthy(), 'hung loops are noticed');
  ac.abort();
  await run;
});

test('register resolves false when aborted before the Node could be created', async (t) => {
  const s = setup();
  s.client.down = true;
  const ac = new AbortController();
  const registering = s.node.register(ac.signal);
  await s.clock.advance(1000);
  ac.abort();
  t.false(await registering);
});
