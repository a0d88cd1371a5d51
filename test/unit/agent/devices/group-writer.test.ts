import test from 'ava';
import { GroupWriter } from '../../../../agent/devices/group-writer';
import { packByNuma } from '../../../../agent/devices/topology';

test('requests made during a write share one follow-up write that sees their state', async (t) => {
  let state = 0;
  const written: number[] = [];
  const gates: (() => void)[] = [];
  const w = new GroupWriter(async () => {
    const snapshot = state;
    await new Promise<void>((r) => gates.push(r));
    written.push(snapshot);
  });
  state = 1;
  const a = w.request();
  state = 2;
  const b = w.request();
  state = 3;
  const c = w.request();
  t.is(b, c, 'queued requests share one promise');
  await new Promise((r) => setImmediate(r));
  t.is(gates.length, 1, 'one write at a time');
  gates.shift()!();
  await a;
  t.deepEqual(written, [1]);
  await new Promise((r) => setImmediate(r));
  t.is(gates.length, 1);
  gates.shift()!();
  await b;
  t.deepEqual(written, [1, 3], 'the follow-up write took the latest state');
  await w.idle();
  const d = w.request();
  gates.shift()!();
  await d;
  t.deepEqual(written, [1, 3, 3]);
});

test('packByNuma: must-include first, then the fullest NUMA node, unknown topology as its own group', (t) => {
  const numa: Record<string, number> = { a: 0, b: 1, c: 1, d: 0, e: 1, f: -1 };
  const of = (id: string) => numa[id];
  t.deepEqual(packByNuma(['a', 'b', 'c', 'd', 'e', 'f'], [], 2, of), ['b', 'c']);
  t.deepEqual(packByNuma(['a', 'd', 'f'], [], 3, of), ['a', 'd', 'f']);
  t.deepEqual(packByNuma(['b', 'c'], ['x'], 2, of), ['x', 'b']);
  t.deepEqual(packByNuma(['a'], [], 3, of), ['a'], 'fewer when there are not enough');
});
