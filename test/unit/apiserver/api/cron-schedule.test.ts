import test from 'ava';
import fc from 'fast-check';
import { createTask } from 'node-cron';
import { CronParseError, parseCronSchedule } from '../../../../apiserver/api/cron-schedule';
import { Zone } from '../../../../apiserver/api/zoned-time';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The next n activations after the instant. */
function nexts(spec: string, from: string, n: number, zone = 'UTC'): Array<string | null> {
  const s = parseCronSchedule(spec, zone);
  const out: Array<string | null> = [];
  let t: number | null = at(from);
  for (let i = 0; i < n && t !== null; i++) {
    t = s.next(t);
    out.push(iso(t));
  }
  return out;
}

test('steps, ranges, lists and names', (t) => {
  t.deepEqual(nexts('*/15 * * * *', '2025-03-01T12:07:30Z', 3), ['2025-03-01T12:15:00.000Z', '2025-03-01T12:30:00.000Z', '2025-03-01T12:45:00.000Z']);
  // robfig: "N/step" means N-max/step.
  t.deepEqual(nexts('5/20 * * * *', '2025-03-01T12:00:00Z', 3), ['2025-03-01T12:05:00.000Z', '2025-03-01T12:25:00.000Z', '2025-03-01T12:45:00.000Z']);
  t.deepEqual(nexts('0 9-10,17 * JAN-mar *', '2025-03-31T16:00:00Z', 3), ['2025-03-31T17:00:00.000Z', '2026-01-01T09:00:00.000Z', '2026-01-01T10:00:00.000Z']);
  t.deepEqual(nexts('0 0 * * sat', '2025-03-01T12:00:00Z', 1), ['2025-03-08T00:00:00.000Z']);
  // An activation exactly at the instant is not "after" it.
  t.deepEqual(nexts('0 12 * * *', '2025-03-01T12:00:00Z', 1), ['2025-03-02T12:00:00.000Z']);
});

test('a restricted day of month and day of week match either; with one of them * both must match', (t) => {
  // 2025-03-01 is a Saturday: the 1st of April (a Tuesday) and every Monday.
  t.deepEqual(nexts('0 0 1 * MON', '2025-03-25T00:00:00Z', 3), ['2025-03-31T00:00:00.000Z', '2025-04-01T00:00:00.000Z', '2025-04-07T00:00:00.000Z']);
  t.deepEqual(nexts('0 0 * * MON', '2025-03-25T00:00:00Z', 2), ['2025-03-31T00:00:00.000Z', '2025-04-07T00:00:00.000Z']);
  // */1 keeps the star bit (robfig), */2 does not: 1-31/2 OR Mondays.
  t.deepEqual(nexts('0 0 */2 * 1', '2025-03-30T00:00:00Z', 2), ['2025-03-31T00:00:00.000Z', '2025-04-01T00:00:00.000Z']);
  t.deepEqual(nexts('0 0 */1 * 1', '2025-03-30T00:00:00Z', 1), ['2025-03-31T00:00:00.000Z']);
});

test('macros and @every', (t) => {
  t.deepEqual(nexts('@hourly', '2025-03-01T12:07:30Z', 1), ['2025-03-01T13:00:00.000Z']);
  t.deepEqual(nexts('@daily', '2025-03-01T12:07:30Z', 1), ['2025-03-02T00:00:00.000Z']);
  t.deepEqual(nexts('@midnight', '2025-03-01T12:07:30Z', 1), ['2025-03-02T00:00:00.000Z']);
  t.deepEqual(nexts('@weekly', '2025-03-01T12:07:30Z', 1), ['2025-03-02T00:00:00.000Z']);
  t.deepEqual(nexts('@monthly', '2025-03-01T12:07:30Z', 1), ['2025-04-01T00:00:00.000Z']);
  t.deepEqual(nexts('@yearly', '2025-03-01T12:07:30Z', 1), ['2026-01-01T00:00:00.000Z']);
  t.deepEqual(nexts('@annually', '2025-03-01T12:07:30Z', 1), ['2026-01-01T00:00:00.000Z']);
  t.deepEqual(nexts('@every 90s', '2025-03-01T12:07:30.400Z', 2), ['2025-03-01T12:09:00.000Z', '2025-03-01T12:10:30.000Z']);
});

test('the 29th of February comes in a leap year; a day no month has never comes', (t) => {
  t.deepEqual(nexts('0 0 29 2 *', '2025-03-01T00:00:00Z', 1), ['2028-02-29T00:00:00.000Z']);
  t.deepEqual(nexts('0 0 30 2 *', '2025-03-01T00:00:00Z', 1), [null]);
});

test('time zones: wall time in the zone, through DST changes as robfig/cron', (t) => {
  // 09:00 in Tokyo is 00:00 UTC; the instant itself is not after itself.
  t.deepEqual(nexts('0 9 * * *', '2025-03-01T00:00:00Z', 1, 'Asia/Tokyo'), ['2025-03-02T00:00:00.000Z']);
  t.deepEqual(nexts('TZ=Asia/Kolkata 30 5 * * *', '2025-03-01T00:00:00Z', 1), ['2025-03-02T00:00:00.000Z']);
  t.deepEqual(nexts('CRON_TZ=UTC 0 5 * * *', '2025-03-01T00:00:00Z', 1, 'Asia/Tokyo'), ['2025-03-01T05:00:00.000Z']);
  // New York springs forward on 2025-03-09: 02:30 does not exist that day.
  t.deepEqual(nexts('30 2 * * *', '2025-03-08T12:00:00Z', 2, 'America/New_York'), ['2025-03-10T06:30:00.000Z', '2025-03-11T06:30:00.000Z']);
  // ... and falls back on 2025-11-02: 01:30 happens twice.
  t.deepEqual(nexts('30 1 * * *', '2025-11-01T12:00:00Z', 3, 'America/New_York'), ['2025-11-02T05:30:00.000Z', '2025-11-02T06:30:00.000Z', '2025-11-03T06:30:00.000Z']);
  // Hourly across the fall-back hour: every absolute hour.
  t.deepEqual(nexts('0 * * * *', '2025-11-02T04:30:00Z', 3, 'America/New_York'), ['2025-11-02T05:00:00.000Z', '2025-11-02T06:00:00.000Z', '2025-11-02T07:00:00.000Z']);
});

test('robfig/cron error messages', (t) => {
  const err = (spec: string) => t.throws(() => parseCronSchedule(spec, 'UTC'), { instanceOf: CronParseError })?.message;
  t.is(err(''), 'empty spec string');
  t.is(err('* * *'), 'expected exactly 5 fields, found 3: [* * *]');
  t.is(err('0 * * * * *'), 'expected exactly 5 fields, found 6: [0 * * * * *]');
  t.is(err('60 * * * *'), 'end of range (60) above maximum (59): 60');
  t.is(err('* * * * 7'), 'end of range (7) above maximum (6): 7');
  t.is(err('* * 0 * *'), 'beginning of range (0) below minimum (1): 0');
  t.is(err('5-1 * * * *'), 'beginning of range (5) beyond end of range (1): 5-1');
  t.is(err('*/0 * * * *'), 'step of range should be a positive number: */0');
  t.is(err('1-2-3 * * * *'), 'too many hyphens: 1-2-3');
  t.is(err('*/2/3 * * * *'), 'too many slashes: */2/3');
  t.is(err('x * * * *'), 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax');
  t.is(err('L * * * *'), 'failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax');
  t.is(err('@fortnightly'), 'unrecognized descriptor: @fortnightly');
  t.is(err('@every soon'), 'failed to parse duration @every soon: time: invalid duration "soon"');
  t.is(err('TZ=Mars/Olympus 0 * * * *'), 'provided bad location Mars/Olympus: unknown time zone Mars/Olympus');
});

test('zones load as Go loads them: tz database names, case-sensitive; "" is UTC', (t) => {
  t.is(Zone.load('').name, 'UTC');
  t.is(Zone.load('Europe/Paris').name, 'Europe/Paris');
  t.throws(() => Zone.load('europe/paris'), { message: 'unknown time zone europe/paris' });
  t.throws(() => Zone.load('Local'), { message: 'unknown time zone Local' });
  t.throws(() => Zone.load('+01:00'), { message: 'unknown time zone +01:00' });
});

/** A random field: *, a value, a range, a step or a list of those. */
function fieldArb(min: number, max: number): fc.Arbitrary<string> {
  const value = fc.integer({ min, max });
  const part = fc.oneof(
    value.map(String),
    fc.tuple(value, value).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.integer({ min: 2, max: 20 }).map((s) => `*/${s}`),
  );
  return fc.oneof(fc.constant('*'), fc.array(part, { minLength: 1, maxLength: 3 }).map((p) => p.join(',')));
}

test('property: next() is the first minute node-cron matches after the instant (day of month and week unrestricted)', (t) => {
  const zones = ['UTC', 'America/New_York', 'Asia/Kolkata'];
  t.notThrows(() =>
    fc.assert(
      fc.property(fieldArb(0, 59), fieldArb(0, 23), fc.integer({ min: Date.parse('2025-01-01T00:00:00Z'), max: Date.parse('2025-12-31T00:00:00Z') }), fc.constantFrom(...zones), (min, hour, from, zone) => {
        const spec = `${min} ${hour} * * *`;
        const next = parseCronSchedule(spec, zone).next(from);
        const task = createTask(spec, () => undefined, { timezone: zone });
        try {
          if (next === null) return false;
          if (!task.match(new Date(next))) return false;
          // Every whole minute strictly between the instant and next does not match.
          for (let m = Math.floor(from / 60_000) * 60_000 + 60_000; m < next; m += 60_000) if (task.match(new Date(m))) return false;
          return true;
        } finally {
          void task.destroy();
        }
      }),
      { numRuns: 60 },
    ),
  );
});
