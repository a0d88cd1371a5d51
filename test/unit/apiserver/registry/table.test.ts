import test from 'ava';
import { ageColumn, formatLabels, humanDuration, translateTimestampSince } from '../../../../apiserver/registry/table';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

test('humanDuration matches kubectl', (t) => {
  const cases: Array<[number, string]> = [
    [-3 * s, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [45 * s, '45s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [5 * m + 10 * s, '5m10s'],
    [9 * m + 59 * s, '9m59s'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [3 * h + 25 * m, '3h25m'],
    [8 * h, '8h'],
    [47 * h, '47h'],
    [2 * d, '2d'],
    [2 * d + 5 * h, '2d5h'],
    [8 * d, '8d'],
    [25 * d, '25d'],
    [729 * d, '729d'],
    [730 * d, '2y'],
    [3 * 365 * d, '3y'],
    [3 * 365 * d + 10 * d, '3y10d'],
    [9 * 365 * d, '9y'],
  ];
  for (const [ms, want] of cases) t.is(humanDuration(ms), want, `${ms}ms`);
});

test('translateTimestampSince and the Age column use the injected clock', (t) => {
  const now = () => Date.parse('2025-03-01T12:00:00Z');
  t.is(translateTimestampSince('2025-03-01T11:54:50Z', now), '5m10s');
  t.is(translateTimestampSince(undefined, now), '<unknown>');
  t.is(translateTimestampSince('garbage', now), '<unknown>');
  const col = ageColumn(now);
  t.is(col.name, 'Age');
  t.is(col.type, 'string');
  t.is(col.priority, 0);
  t.is(col.cell({ metadata: { creationTimestamp: '2025-02-24T07:00:00Z' } }), '5d5h');
});

test('formatLabels sorts pairs and prints <none> when empty', (t) => {
  t.is(formatLabels({ b: '2', a: '1' }), 'a=1,b=2');
  t.is(formatLabels({}), '<none>');
  t.is(formatLabels(undefined), '<none>');
});
