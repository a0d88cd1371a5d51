import test from 'ava';
import { RuntimeError } from '../../../../agent/cri/errors';
import type { RuntimeService } from '../../../../agent/cri/runtime-service';
import { instrumentRuntime, operationName } from '../../../../agent/metrics/instrumented-runtime';

test('operation names are the method names in snake case', (t) => {
  t.is(operationName('checkpointContainer'), 'checkpoint_container');
  t.is(operationName('listPodSandbox'), 'list_pod_sandbox');
  t.is(operationName('status'), 'status');
});

test('every promise-returning call is timed and its failure code recorded; results and errors pass through', async (t) => {
  const calls: [string, number, string | undefined][] = [];
  let clock = 0;
  const inner = {
    version() {
      clock += 250;
      return Promise.resolve({ runtimeName: 'sim' });
    },
    removeContainer() {
      clock += 1000;
      return Promise.reject(new RuntimeError('NotFound', 'no such container', 'RemoveContainer'));
    },
    stopContainer() {
      return Promise.reject(new Error('plain'));
    },
    close() {
      calls.push(['close', 0, undefined]);
    },
  } as unknown as RuntimeService;
  const rt = instrumentRuntime(inner, { runtimeCall: (op, s, code) => void calls.push([op, s, code]) }, () => clock);
  t.deepEqual(await rt.version(), { runtimeName: 'sim' } as never);
  const e = await t.throwsAsync(rt.removeContainer('x'), { instanceOf: RuntimeError });
  t.is(e?.message, 'no such container');
  await t.throwsAsync(rt.stopContainer('x', 1), { message: 'plain' });
  rt.close();
  t.deepEqual(calls, [
    ['version', 0.25, undefined],
    ['remove_container', 1, 'NotFound'],
    ['stop_container', 0, 'Unknown'],
    ['close', 0, undefined],
  ]);
});
