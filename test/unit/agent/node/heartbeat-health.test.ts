import test from 'ava';
import { HeartbeatHealth } from '../../../../agent/node/heartbeat-health';
import { ProgressTracker } from '../../../../agent/node/progress';
import { FakeClock } from '../../../helpers/fake-clock';

test('healthy during start-up; afterwards only while every tracked loop makes progress', async (t) => {
  const clock = new FakeClock();
  const lease = new ProgressTracker(clock);
  const status = new ProgressTracker(clock);
  const health = new HeartbeatHealth({ requestTimeoutMs: 10_000 });
  await clock.advance(600_000);
  t.true(health.healthy(), 'a long start-up is not "stuck"');
  t.is(health.track({ progress: lease, periodMs: 10_400, requestsPerAttempt: 3, minStuckMs: 40_000 }), 80_800);
  t.is(health.track({ progress: status, periodMs: 10_000, requestsPerAttempt: 2 }), 60_000);
  await clock.advance(59_000);
  t.true(health.healthy());
  status.mark(); // a failed attempt still counts as progress
  await clock.advance(2000);
  t.true(health.healthy());
  await clock.advance(20_000);
  t.false(health.healthy(), 'the lease loop has been silent for 81 s');
  lease.succeeded();
  t.true(health.healthy());
  await clock.advance(58_000);
  t.false(health.healthy(), 'the status loop has been silent for over 60 s');
});

test('the lease duration is a floor for the stuck bound', (t) => {
  const health = new HeartbeatHealth({ requestTimeoutMs: 1000 });
  t.is(health.track({ progress: new ProgressTracker(new FakeClock()), periodMs: 1000, requestsPerAttempt: 1, minStuckMs: 40_000 }), 40_000);
});
