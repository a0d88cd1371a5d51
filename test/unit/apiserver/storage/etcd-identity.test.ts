import test from 'ava';
import { ClusterIdentity } from '../../../../apiserver/storage/etcd-identity';
import { StorageError } from '../../../../apiserver/storage/storage';

/** A probe answering from a table (undefined: the endpoint does not answer), counting calls. */
function probeOf(ids: Record<string, string | undefined>) {
  const calls: string[] = [];
  const probe = (e: string) => {
    calls.push(e);
    const id = ids[e];
    if (id === undefined) return Promise.reject(new Error('connection refused'));
    return Promise.resolve(id);
  };
  return { probe, calls, ids };
}

async function refusal(p: Promise<void>): Promise<string> {
  try {
    await p;
    return 'admitted';
  } catch (e) {
    return e instanceof StorageError && e.code === 'Unavailable' ? e.message : `unexpected: ${String(e)}`;
  }
}

test('endpoints of one cluster are admitted after one probe each', async (t) => {
  const p = probeOf({ a: 'X', b: 'X', c: 'X' });
  const id = new ClusterIdentity(['a', 'b', 'c'], p.probe, () => 0);
  await id.admit('b');
  await id.admit('a');
  await id.admit('c');
  await id.admit('b');
  t.is(id.clusterId, 'X');
  t.deepEqual(p.calls.sort(), ['a', 'b', 'c']);
});

test('an endpoint of another cluster is never admitted and is reported once', async (t) => {
  const p = probeOf({ a: 'X', b: 'X', c: 'X', d: 'Y' });
  const foreign: string[] = [];
  const id = new ClusterIdentity(['a', 'b', 'c', 'd'], p.probe, () => 0, (e, got, want) => foreign.push(`${e} ${got}≠${want}`));
  t.regex(await refusal(id.admit('d')), /d belongs to cluster Y, not X; it is not used/);
  t.regex(await refusal(id.admit('d')), /belongs to cluster Y/);
  await id.admit('a');
  t.deepEqual(foreign, ['d Y≠X']);
});

test('endpoints that disagree without a majority: nothing is admitted', async (t) => {
  const p = probeOf({ a: 'X', b: 'Y' });
  const id = new ClusterIdentity(['a', 'b'], p.probe, () => 0);
  t.regex(await refusal(id.admit('a')), /belong to different clusters and no majority of the 2 agrees \(a → X, b → Y\)/);
  t.regex(await refusal(id.admit('b')), /no majority/);
  t.is(id.clusterId, undefined);
});

test('unreachable endpoints: refused until one answers, then probed again after a pause', async (t) => {
  let now = 0;
  const p = probeOf({ a: undefined, b: undefined });
  const id = new ClusterIdentity(['a', 'b'], p.probe, () => now);
  t.is(await refusal(id.admit('a')), 'etcd: no endpoint answers');
  t.is(p.calls.length, 2);
  t.is(await refusal(id.admit('a')), 'etcd: no endpoint answers');
  t.is(p.calls.length, 2, 'no probe within the retry pause');
  p.ids.a = 'X';
  now += 1000;
  await id.admit('a');
  t.is(id.clusterId, 'X', 'the answering endpoints agree');
  t.regex(await refusal(id.admit('b')), /b does not answer/);
  p.ids.b = 'X';
  now += 1000;
  await id.admit('b');
});

test('after forget, an endpoint is probed again: a member replaced by one of another cluster is dropped', async (t) => {
  const p = probeOf({ a: 'X', b: 'X', c: 'X' });
  const id = new ClusterIdentity(['a', 'b', 'c'], p.probe, () => 0);
  await id.admit('c');
  p.ids.c = 'Z';
  await id.admit('c'); // known: no probe
  id.forget('c');
  t.regex(await refusal(id.admit('c')), /c belongs to cluster Z, not X/);
  await id.admit('a');
});

test('concurrent admits share one probe per endpoint', async (t) => {
  const p = probeOf({ a: 'X' });
  const id = new ClusterIdentity(['a'], p.probe, () => 0);
  await Promise.all([id.admit('a'), id.admit('a'), id.admit('a')]);
  t.deepEqual(p.calls, ['a']);
});
