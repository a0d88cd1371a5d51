import test from 'ava';
import { endpointText, parseEndpoint } from '../../../../agent/cri/endpoint';
import type { RuntimeErrorCode } from '../../../../agent/cri/errors';
import { isRuntimeError } from '../../../../agent/cri/errors';
import { createRuntimeService } from '../../../../agent/cri/factory';
import { Simulator } from '../../../../agent/cri/simulator';
import { sandboxConfig } from './configs';

async function rejectsWith(t: { fail(m: string): void }, p: Promise<unknown>, code: RuntimeErrorCode): Promise<Error> {
  try {
    await p;
  } catch (e) {
    if (isRuntimeError(e) && e.code === code) return e;
    t.fail(`rejected with ${String(e)}, want ${code}`);
    return e as Error;
  }
  t.fail(`resolved, want ${code}`);
  return new Error('resolved');
}
const setup = () => ({ sim: new Simulator() });

test('runtime handlers: the default and runc are known, others refused with containerd\'s message unless configured', async (t) => {
  const { sim } = setup();
  t.truthy(await sim.runPodSandbox(sandboxConfig('default-handler'), ''));
  const runc = await sim.runPodSandbox(sandboxConfig('runc-handler'), 'runc');
  t.is((await sim.podSandboxStatus(runc)).status.runtimeHandler, 'runc');
  const e = await rejectsWith(t, sim.runPodSandbox(sandboxConfig('kata-handler'), 'kata'), 'NotFound');
  t.is(e.message, 'failed to get sandbox runtime: no runtime for "kata" is configured');
  t.deepEqual((await sim.status()).handlers.map((h) => h.name), ['', 'runc']);
  const kata = new Simulator({ runtimeHandlers: ['kata'] });
  t.truthy(await kata.runPodSandbox(sandboxConfig('kata-handler'), 'kata'));
  await rejectsWith(t, kata.runPodSandbox(sandboxConfig('runc-handler'), 'runc'), 'NotFound');
  t.deepEqual(parseEndpoint('sim://n1?handlers=runc,kata'), { kind: 'sim', name: 'n1', handlers: ['runc', 'kata'] });
  t.is(endpointText(parseEndpoint('sim://n1?handlers=runc')), 'sim://n1');
  t.deepEqual(((await (createRuntimeService('sim://n1?handlers=gvisor') as Simulator).status()).handlers).map((h) => h.name), ['', 'gvisor']);
});
