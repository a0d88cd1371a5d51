import test from 'ava';
import { FlagCheck, ReadinessSource } from '../../../../agent/node/readiness';

test('ready with no checks; not ready with the reasons of each failing check', async (t) => {
  const r = new ReadinessSource();
  t.deepEqual(await r.evaluate(), { ready: true, problems: [] });
  const runtime = new FlagCheck('container runtime', 'not connected');
  r.add(runtime);
  r.add({ name: 'network', check: () => Promise.reject(new Error('plugin not initialized')) });
  t.deepEqual(await r.evaluate(), { ready: false, problems: ['container runtime: not connected', 'network: plugin not initialized'] });
  runtime.set(undefined);
  t.deepEqual((await r.evaluate()).problems, ['network: plugin not initialized']);
});
