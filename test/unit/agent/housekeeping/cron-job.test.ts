import test from 'ava';
import { CronJob } from '../../../../agent/housekeeping/cron-job';
import type { Log } from '../../../../agent/platform/logger';

const quiet: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

test('a job runs its task on the schedule, survives a failing round, and stops when the signal aborts', async (t) => {
  let runs = 0;
  const warnings: string[] = [];
  const ac = new AbortController();
  const job = new CronJob({
    name: 'test',
    schedule: '* * * * * *', // every second
    task: () => {
      runs++;
      return runs === 1 ? Promise.reject(new Error('first round fails')) : Promise.resolve();
    },
    log: { ...quiet, warn: (_o, m) => void warnings.push(m) },
  });
  const running = job.run(ac.signal);
  for (let i = 0; i < 200 && runs < 2; i++) await new Promise((r) => setTimeout(r, 100));
  t.true(runs >= 2, `ran ${runs} times`);
  t.true(warnings.includes('scheduled job failed'));
  ac.abort();
  await running;
  const after = runs;
  await new Promise((r) => setTimeout(r, 1500));
  t.is(runs, after, 'no runs after the abort');
});
