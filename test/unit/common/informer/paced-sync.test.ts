import test from 'ava';
import { PacedSync } from '../../../../common/informer/paced-sync';
import { WorkQueue, runWorkers } from '../../../../common/informer/work-queue';
import { FakeClock, flush } from '../../../helpers/fake-clock';

function setup(fail: () => boolean = () => false) {
  const clock = new FakeClock();
  const queue = new WorkQueue({ clock });
  const syncs: number[] = [];
  const paced = new PacedSync({
    queue,
    now: () => clock.now(),
    minIntervalMs: 1000,
    sync: () => {
      syncs.push(clock.now() - Date.UTC(2025, 0, 1));
      return fail() ? Promise.reject(new Error('nft refused')) : Promise.resolve();
    },
  });
  const ac = new AbortController();
  const workers = runWorkers(queue, () => paced.runOnce(), ac.signal, { onError: () => undefined });
  return { clock, paced, syncs, stop: async () => (ac.abort(), await workers) };
}

test('requests fold into one sync; the next starts no sooner than the interval after the last', async (t) => {
  const { clock, paced, syncs, stop } = setup();
  paced.request();
  paced.request();
  await flush();
  t.deepEqual(syncs, [0]);
  t.is(paced.pendingMs(), undefined);
  await clock.advance(200);
  paced.request();
  paced.request();
  await flush();
  t.deepEqual(syncs, [0], 'postponed');
  t.is(paced.pendingMs(), 0);
  await clock.advance(800);
  await flush();
  t.deepEqual(syncs, [0, 1000]);
  t.is(paced.pendingMs(), undefined);
  await stop();
});

test('a failed sync keeps the change pending (readiness) until a sync succeeds', async (t) => {
  let failing = true;
  const { clock, paced, syncs, stop } = setup(() => failing);
  paced.request();
  await flush();
  t.deepEqual(syncs, [0]);
  await clock.advance(5000);
  await flush();
  t.true(syncs.length >= 2, 'retried');
  t.is(paced.pendingMs(), 5000);
  failing = false;
  await clock.advance(60_000);
  await flush();
  t.is(paced.pendingMs(), undefined);
  await stop();
});
