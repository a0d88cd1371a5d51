/** The heartbeat failure policy: one observer, one redial and one health signal for every loop; counts, back-off and messages per loop. */
import test from 'ava';
import { ClientError } from '../../../../agent/client/client-error';
import { HeartbeatHealth } from '../../../../agent/node/heartbeat-health';
import { HeartbeatPolicy, type LoopFailureOptions } from '../../../../agent/node/heartbeat-policy';
import { ProgressTracker } from '../../../../agent/node/progress';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from './fakes/mem-log';

function setup() {
  const clock = new FakeClock();
  const log = new MemLog();
  const seen: string[] = [];
  let redials = 0;
  const health = new HeartbeatHealth({ requestTimeoutMs: 1000 });
  const policy = new HeartbeatPolicy({
    observer: { heartbeat: (kind, ok) => seen.push(`${kind} ${ok}`) },
    onRepeatedFailure: () => {
      redials++;
      return Promise.resolve();
    },
    health,
  });
  const opts = (kind: 'lease' | 'status', extra: Partial<LoopFailureOptions> = {}): LoopFailureOptions => ({
    kind,
    log,
    nodeName: 'node-a',
    progress: new ProgressTracker(clock),
    redialAfterFailures: kind === 'lease' ? 2 : 3,
    messages: { failed: `${kind} failed`, redial: `${kind} redial`, ...(kind === 'lease' ? { recovered: 'lease back' } : {}) },
    ...extra,
  });
  return { clock, log, seen, health, policy, opts, redials: () => redials };
}

test('each loop counts its own failures and redials every Nth; both report to the one observer', async (t) => {
  const s = setup();
  const lease = s.policy.loop(s.opts('lease'));
  const status = s.policy.loop(s.opts('status'));
  const err = new ClientError(0, 'Unreachable', 'connection refused');
  for (let i = 0; i < 3; i++) await lease.failed(err);
  t.is(s.redials(), 1, 'lease: after its 2nd failure');
  for (let i = 0; i < 3; i++) await status.failed(err);
  t.is(s.redials(), 2, 'status: after its 3rd failure, its own count');
  t.is(lease.consecutiveFailures, 3);
  t.is(status.consecutiveFailures, 3);
  status.succeeded();
  t.deepEqual(s.seen, ['lease false', 'lease false', 'lease false', 'status false', 'status false', 'status false', 'status true']);
  t.is(status.consecutiveFailures, 0);
  t.is(lease.consecutiveFailures, 3);
  t.deepEqual(
    s.log.find('failed').map((l) => l.obj),
    [
      ...[1, 2, 3].map((n) => ({ node: 'node-a', consecutiveFailures: n, code: 0, error: 'connection refused' })),
      ...[1, 2, 3].map((n) => ({ node: 'node-a', consecutiveFailures: n, code: 0, error: 'connection refused' })),
    ],
  );
  t.deepEqual(
    s.log.lines.filter((l) => l.msg.endsWith('redial')).map((l) => [l.msg, l.obj['consecutiveFailures']]),
    [
      ['lease redial', 2],
      ['status redial', 3],
    ],
  );
  t.is(s.log.find('lease back').length, 0);
  lease.succeeded();
  t.deepEqual(s.log.find('lease back').map((l) => l.obj), [{ node: 'node-a', after: 3 }]);
});

test('a loop with a back-off gets growing delays (logged as retryInMs), reset by a success', async (t) => {
  const s = setup();
  const lease = s.policy.loop(s.opts('lease', { backoff: { initialMs: 200, maxMs: 700 } }));
  const status = s.policy.loop(s.opts('status'));
  const delays = [];
  for (let i = 0; i < 4; i++) delays.push(await lease.failed(new Error('x')));
  t.deepEqual(delays, [200, 400, 700, 700]);
  t.deepEqual(
    s.log.find('lease failed').map((l) => l.obj['retryInMs']),
    [200, 400, 700, 700],
  );
  lease.succeeded();
  t.is(await lease.failed(new Error('x')), 200);
  t.is(await status.failed(new Error('x')), undefined, 'no back-off: the loop tries again at its next tick');
  t.false('retryInMs' in s.log.find('status failed')[0].obj);
});

test('progress: a failure marks it, a success records it; the health signal watches a loop only from watch()', async (t) => {
  const s = setup();
  const o = s.opts('status');
  const status = s.policy.loop(o);
  await s.clock.advance(100_000);
  t.true(s.health.healthy(), 'not watched yet');
  s.policy.watch(status, { periodMs: 10_000, requestsPerAttempt: 2 });
  t.true(s.health.healthy());
  await s.clock.advance(20_000);
  await status.failed(new Error('x'));
  t.is(o.progress!.sinceProgressMs(), 0);
  t.is(o.progress!.sinceSuccessMs(), undefined);
  await s.clock.advance(24_000);
  t.true(s.health.healthy());
  await s.clock.advance(1);
  t.false(s.health.healthy(), 'no attempt finished for over 2 x (10 s + 2 x 1 s)');
  status.succeeded();
  t.true(s.health.healthy());
  t.is(o.progress!.sinceSuccessMs(), 0);
});
