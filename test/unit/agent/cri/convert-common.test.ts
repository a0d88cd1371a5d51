import test from 'ava';
import { compact, enumOf, msToNs, nsToMs, num } from '../../../../agent/cri/convert-common';

test('nanosecond timestamps: exact ms both ways, sub-ms dropped, garbage is 0', (t) => {
  t.is(nsToMs('1700000000123456789'), 1700000000123);
  t.is(msToNs(1700000000123), '1700000000123000000');
  t.is(nsToMs(msToNs(1795332501189)), 1795332501189);
  t.is(nsToMs('0'), 0);
  t.is(nsToMs(undefined), 0);
  t.is(nsToMs('not a number'), 0);
  t.is(msToNs(0), '0');
});

test('int64 strings become numbers; enums outside the union fall back', (t) => {
  t.is(num('1099511627776'), 2 ** 40);
  t.is(num(undefined), 0);
  t.is(num('x'), 0);
  t.is(enumOf('CONTAINER_RUNNING', ['CONTAINER_RUNNING', 'CONTAINER_UNKNOWN'] as const, 'CONTAINER_UNKNOWN'), 'CONTAINER_RUNNING');
  t.is(enumOf(7, ['A'] as const, 'A'), 'A');
});

test('compact drops proto3 defaults only', (t) => {
  t.deepEqual(compact({ a: '', b: 0, c: false, d: [], e: {}, f: undefined, g: 'x', h: -1, i: [0], j: { k: '' }, l: true }), {
    g: 'x',
    h: -1,
    i: [0],
    j: { k: '' },
    l: true,
  });
});
