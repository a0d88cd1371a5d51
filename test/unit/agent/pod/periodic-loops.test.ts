/** The pod manager's tickers: housekeeping (then device release) and the node refresh every 10 s, image GC every 5 min, each after one period; failures do not stop a loop. */
import test from 'ava';
import type { RuntimeService } from '../../../../agent/cri';
import { PeriodicLoops } from '../../../../agent/pod/periodic-loops';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';

/**
 * Waits for cond: the round under test does real file system calls (its log folder), which finish
 * on libuv's thread pool, so a fixed number of event-loop turns is not enough on a loaded machine.
 */
async function settled(cond: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  return cond();
}

function setup() {
  const clock = new FakeClock();
  const log = new MemLog();
  const calls = { sandboxLists: 0, imageLists: 0, refreshes: 0, retained: [] as string[][] };
  let failNextList = false;
  const runtime = {
    listPodSandbox: () => {
      calls.sandboxLists++;
      if (failNextList) {
        failNextList = false;
        return Promise.reject(new Error('runtime down'));
      }
      return Promise.resolve([]);
    },
    listContainers: () => Promise.resolve([]),
    listImages: () => {
      calls.imageLists++;
      return Promise.resolve([]);
    },
    imageFsInfo: () => Promise.resolve({ imageFilesystems: [] }),
  } as unknown as RuntimeService;
  let ready = false;
  const loops = new PeriodicLoops({
    runtime,
    clock,
    log,
    syncer: {} as never,
    volumes: { podUids: () => Promise.resolve([]) } as never,
    cgroups: { podUids: () => Promise.resolve([]) } as never,
    records: {} as never,
    podLogsDir: '/nonexistent/svc-pod-logs',
    callTimeoutMs: 1000,
    imageGC: { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 0 },
    knownUids: () => new Set(['uid-a']),
    sourcesReady: () => ready,
    retainDevices: (active) => {
      calls.retained.push([...active]);
      return Promise.resolve();
    },
    refreshNode: () => {
      calls.refreshes++;
      return Promise.resolve();
    },
  });
  return { clock, log, loops, calls, setReady: (r: boolean) => (ready = r), failNextList: () => (failNextList = true) };
}

test('each loop waits one period first; devices are released only once the sources are ready', async (t) => {
  const s = setup();
  const ac = new AbortController();
  const run = s.loops.run(ac.signal);
  await s.clock.advance(9_999);
  t.deepEqual(s.calls, { sandboxLists: 0, imageLists: 0, refreshes: 0, retained: [] });
  await s.clock.advance(1);
  t.is(s.calls.sandboxLists, 1);
  t.is(s.calls.refreshes, 1);
  t.deepEqual(s.calls.retained, [], 'sources not ready: no device is released');
  s.setReady(true);
  await s.clock.advance(10_000);
  t.is(s.calls.sandboxLists, 2);
  t.true(await settled(() => s.calls.retained.length > 0));
  t.deepEqual(s.calls.retained, [['uid-a']]);
  t.is(s.calls.imageLists, 0);
  await s.clock.advance(5 * 60_000 - 20_000);
  t.is(s.calls.imageLists, 1, 'image GC after 5 min');
  ac.abort();
  await run;
  t.is(s.clock.pending, 0);
});

test('a failing round is logged and the loop goes on; housekeepOnce runs a round now', async (t) => {
  const s = setup();
  const ac = new AbortController();
  const run = s.loops.run(ac.signal);
  s.failNextList();
  await s.clock.advance(10_000);
  t.is(s.log.find('periodic pod task failed').length, 1);
  t.is(s.log.find('periodic pod task failed')[0].obj['error'], 'runtime down');
  await s.clock.advance(10_000);
  t.is(s.calls.sandboxLists, 2);
  await s.loops.housekeepOnce();
  t.is(s.calls.sandboxLists, 3);
  ac.abort();
  await run;
});
