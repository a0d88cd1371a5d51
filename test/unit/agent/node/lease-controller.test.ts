import test from 'ava';
import { leasesResource } from '../../../../agent/client/resources';
import { HeartbeatPolicy } from '../../../../agent/node/heartbeat-policy';
import { LeaseController, type Lease } from '../../../../agent/node/lease-controller';
import { ProgressTracker } from '../../../../agent/node/progress';
import { FakeApiClient } from './fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from './fakes/mem-log';
import { NODE_LEASE_NAMESPACE as leaseNamespace } from '../../../../apiserver/api/well-known';

function setup(o: { uid?: string; random?: () => number } = {}) {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const log = new MemLog();
  const progress = new ProgressTracker(clock);
  let uid = 'uid' in o ? o.uid : 'node-uid-1';
  let redials = 0;
  const lease = new LeaseController({
    client,
    clock,
    log,
    nodeName: 'node-a',
    leaseDurationSeconds: 40,
    nodeUid: () => uid,
    random: o.random ?? (() => 0.5),
    progress,
    policy: new HeartbeatPolicy({
      onRepeatedFailure: () => {
        redials++;
        return Promise.resolve();
      },
    }),
  });
  const ac = new AbortController();
  return {
    client,
    clock,
    log,
    lease,
    ac,
    progress,
    setUid: (u: string) => (uid = u),
    redials: () => redials,
    stored: () => client.peek<Lease>(leasesResource, 'node-a', leaseNamespace),
  };
}

test('creates the Lease owned by the Node, then renews it every leaseDuration/4 plus bounded jitter', async (t) => {
  const s = setup();
  let first = false;
  void s.lease.whenFirstRenewed().then(() => (first = true));
  const run = s.lease.run(s.ac.signal);
  await s.clock.advance(0);
  t.true(first);
  const created = s.stored()!;
  t.deepEqual(created.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'node-uid-1' }]);
  t.is(created.spec!.holderIdentity, 'node-a');
  t.is(created.spec!.leaseDurationSeconds, 40);
  t.is(created.spec!.renewTime, '2025-01-01T00:00:00.000000Z');
  t.is(s.lease.renewIntervalMs, 10_000);
  t.is(s.clock.requested[0], 10_200, 'jitter: 4% of 10 s times random 0.5');
  await s.clock.advance(10_200);
  t.is(s.client.callsOf('update').length, 1);
  t.is(s.stored()!.spec!.renewTime, '2025-01-01T00:00:10.200000Z');
  await s.clock.advance(10_200);
  t.is(s.client.callsOf('update').length, 2);
  t.is(s.client.callsOf('get').length, 1, 'renewals update the last written Lease without reading it again');
  t.is(s.progress.sinceSuccessMs(), 0);
  s.ac.abort();
  await run;
});

test('jitter never exceeds 4% of the interval', async (t) => {
  const s = setup({ random: () => 0.999999 });
  const run = s.lease.run(s.ac.signal);
  await s.clock.advance(0);
  t.true(s.clock.requested[0] >= 10_000 && s.clock.requested[0] <= 10_400);
  s.ac.abort();
  await run;
});

test('failures retry with back-off from 200 ms to 7 s, redialing every second consecutive failure, then recover', async (t) => {
  const s = setup();
  const run = s.lease.run(s.ac.signal);
  await s.clock.advance(0);
  s.client.down = true;
  s.clock.requested.length = 0;
  await s.clock.advance(10_200); // renewal due: fails
  await s.clock.advance(200 + 400 + 800 + 1600 + 3200 + 6400 + 7000 + 7000);
  t.deepEqual(s.clock.requested, [200, 400, 800, 1600, 3200, 6400, 7000, 7000, 7000]);
  t.is(s.redials(), 4);
  t.true(s.progress.healthy(10_000), 'a loop that keeps trying is making progress');
  const warn = s.log.find('failed to renew node lease')[0];
  t.is(warn.obj['retryInMs'], 200);
  s.client.down = false;
  const before = s.stored()!.spec!.renewTime;
  await s.clock.advance(7000);
  t.not(s.stored()!.spec!.renewTime, before);
  t.is(s.log.find('node lease renewed again').length, 1);
  t.is(s.clock.requested.at(-1), 10_200, 'back to the normal interval');
  s.ac.abort();
  await run;
});

test('a conflicting write by someone else falls back to get-then-update', async (t) => {
  const s = setup();
  const run = s.lease.run(s.ac.signal);
  await s.clock.advance(0);
  s.client.mutate(leasesResource, 'node-a', leaseNamespace, (l) => ((l['spec'] as any).holderIdentity = 'intruder'));
  await s.clock.advance(10_200);
  t.is(s.stored()!.spec!.holderIdentity, 'node-a');
  t.is(s.client.callsOf('update').length, 2, 'the stale update failed, the fresh one succeeded');
  t.is(s.log.find('failed to renew').length, 0);
  s.ac.abort();
  await run;
});

test('a deleted Lease is created again', async (t) => {
  const s = setup();
  const run = s.lease.run(s.ac.signal);
  await s.clock.advance(0);
  s.client.remove(leasesResource, 'node-a', leaseNamespace);
  await s.clock.advance(10_200);
  t.truthy(s.stored());
  t.is(s.client.callsOf('create').length, 2);
  s.ac.abort();
  await run;
});

test('a Lease created before the Node uid was known gets its owner reference on a later renewal', async (t) => {
  const s = setup({ uid: undefined });
  const run = s.lease.run(s.ac.signal);
  await s.clock.advance(0);
  t.is(s.stored()!.metadata.ownerReferences, undefined);
  s.setUid('late-uid');
  await s.clock.advance(10_200);
  t.deepEqual(s.stored()!.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'late-uid' }]);
  s.ac.abort();
  await run;
});

test('a hung call stops progress, so the watchdog can tell; abort ends the loop', async (t) => {
  const s = setup();
  const run = s.lease.run(s.ac.signal);
  await s.clock.advance(0);
  s.client.hang = true;
  await s.clock.advance(10_200);
  await s.clock.advance(60_000);
  t.false(s.progress.healthy(40_000));
  s.ac.abort();
  await run;
  t.is(s.clock.pending, 0);
});
