import test from 'ava';
import { parseStreamPath } from '../../../../agent/server/stream-paths';
import { StreamTracker } from '../../../../agent/server/stream-tracker';
import { ResourceExhaustedError } from '../../../../agent/errors';

test('streaming paths: with and without the pod UID, escaped segments, anything else undefined', (t) => {
  t.deepEqual(parseStreamPath('/exec/ns/pod/c'), { verb: 'exec', namespace: 'ns', pod: 'pod', container: 'c' });
  t.deepEqual(parseStreamPath('/attach/ns/pod/uid-1/c'), { verb: 'attach', namespace: 'ns', pod: 'pod', uid: 'uid-1', container: 'c' });
  t.deepEqual(parseStreamPath('/portForward/ns/pod'), { verb: 'portForward', namespace: 'ns', pod: 'pod' });
  t.deepEqual(parseStreamPath('/portForward/ns/pod/uid'), { verb: 'portForward', namespace: 'ns', pod: 'pod', uid: 'uid' });
  t.deepEqual(parseStreamPath('/run/ns/p%2Fx/c'), { verb: 'run', namespace: 'ns', pod: 'p/x', container: 'c' });
  for (const bad of ['/exec/ns/pod', '/exec/ns//c', '/portForward/ns', '/exec/ns/pod/a/b/c', '/execs/ns/pod/c', '/exec/ns/pod/%E0%A4%A']) t.is(parseStreamPath(bad), undefined, bad);
});

test('the tracker refuses the connection past the cap with 429 and counts each release once', (t) => {
  const tr = new StreamTracker(2);
  const a = tr.acquireConnection();
  const b = tr.acquireConnection();
  const err = t.throws(() => tr.acquireConnection(), { instanceOf: ResourceExhaustedError });
  t.is(err.httpStatus, 429);
  a();
  a();
  t.is(tr.connections(), 1);
  const r = tr.acquireRuntime();
  t.is(tr.runtimeStreams(), 1);
  r();
  b();
  t.deepEqual([tr.connections(), tr.runtimeStreams()], [0, 0]);
});
