import test from 'ava';
import { cronProblem } from '../../../../agent/config/cron-expression';

test('cron expressions: five or six fields are valid; anything else says what is wrong', (t) => {
  t.is(cronProblem('*/10 * * * *'), undefined);
  t.is(cronProblem('0 3 * * 1-5'), undefined);
  t.is(cronProblem('*/30 * * * * *'), undefined);
  for (const bad of ['', 'every day', '61 * * * *', '* * * *', '* * 32 * *']) {
    const why = cronProblem(bad);
    t.truthy(why, bad);
    t.regex(why!, bad === '' ? /must be a cron expression/ : /^invalid cron expression/);
  }
});
