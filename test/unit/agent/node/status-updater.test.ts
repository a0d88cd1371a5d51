import test from 'ava';
import { nodesResource } from '../../../../agent/client/resources';
import { HeartbeatPolicy } from '../../../../agent/node/heartbeat-policy';
import { NodeRegistrar } from '../../../../agent/node/registration';
import { NodeStatusUpdater } from '../../../../agent/node/status-updater';
import { FakeApiClient } from './fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';
import { identity, testStatus } from './fakes/fixtures';
import { MemLog } from './fakes/mem-log';

async function setup() {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const log = new MemLog();
  const status = testStatus();
  const registrar = new NodeRegistrar({ client, clock, log, identity: identity(), status: status.source });
  await registrar.register(new AbortController().signal);
  let redials = 0;
  const reregistered: number[] = [];
  const updater = new NodeStatusUpdater({
    client,
    clock,
    log,
    nodeName: 'node-a',
    status: status.source,
    updateFrequencyMs: 10_000,
    reportFrequencyMs: 300_000,
    reregister: async (s) => {
      reregistered.push(clock.now());
      return registrar.register(s);
    },
    policy: new HeartbeatPolicy({
      onRepeatedFailure: () => {
        redials++;
        return Promise.resolve();
      },
    }),
  });
  client.calls.length = 0;
  const ac = new AbortController();
  const statusPatches = () => client.callsOf('patch').filter((c) => c.subresource === 'status');
  return { client, clock, log, status, updater, ac, statusPatches, redials: () => redials, reregistered };
}

const ready = (client: FakeApiClient) => ((client.peek(nodesResource, 'node-a')!['status'] as any).conditions as any[]).find((c) => c.type === 'Ready');

test('posts at start, then only when something changed, reading the node from the cache (resourceVersion 0)', async (t) => {
  const s = await setup();
  const run = s.updater.run(s.ac.signal);
  await s.clock.advance(0);
  t.is(s.statusPatches().length, 1, 'first sync always reports');
  t.is((s.client.callsOf('get')[0].opts as any).resourceVersion, '0');
  await s.clock.advance(10_000);
  await s.clock.advance(10_000);
  t.is(s.client.callsOf('get').length, 3);
  t.is(s.statusPatches().length, 1, 'nothing changed: no patch');
  s.status.pressure.memory = true;
  await s.clock.advance(10_000);
  t.is(s.statusPatches().length, 2);
  const mem = ((s.client.peek(nodesResource, 'node-a')!['status'] as any).conditions as any[]).find((c) => c.type === 'MemoryPressure');
  t.is(mem.status, 'True');
  t.is(mem.lastTransitionTime, new Date(s.clock.now()).toISOString().replace('.000Z', 'Z'));
  t.deepEqual(s.log.find('node status changed')[0].obj['changed'], ['conditions']);
  s.ac.abort();
  await run;
});

test('reports at least every nodeStatusReportFrequency even when nothing changed, moving lastHeartbeatTime only', async (t) => {
  const s = await setup();
  const run = s.updater.run(s.ac.signal);
  await s.clock.advance(0);
  const before = ready(s.client);
  for (let i = 0; i < 29; i++) await s.clock.advance(10_000);
  t.is(s.statusPatches().length, 1);
  await s.clock.advance(10_000);
  t.is(s.statusPatches().length, 2, 'reported after 5 minutes');
  const after = ready(s.client);
  t.not(after.lastHeartbeatTime, before.lastHeartbeatTime);
  t.is(after.lastTransitionTime, before.lastTransitionTime);
  s.ac.abort();
  await run;
});

test('a Ready=Unknown set by the control plane is corrected at the next tick', async (t) => {
  const s = await setup();
  const run = s.updater.run(s.ac.signal);
  await s.clock.advance(0);
  s.client.mutate(nodesResource, 'node-a', undefined, (n) => {
    const c = ((n['status'] as any).conditions as any[]).find((x) => x.type === 'Ready');
    c.status = 'Unknown';
    c.reason = 'NodeStatusUnknown';
  });
  await s.clock.advance(10_000);
  t.is(ready(s.client).status, 'True');
  t.is(s.statusPatches().length, 2);
  s.ac.abort();
  await run;
});

test('a deleted Node is registered again', async (t) => {
  const s = await setup();
  s.client.remove(nodesResource, 'node-a');
  const run = s.updater.run(s.ac.signal);
  await s.clock.advance(0);
  t.is(s.reregistered.length, 1);
  t.truthy(s.client.peek(nodesResource, 'node-a'));
  t.is(s.log.find('no longer exists').length, 1);
  s.ac.abort();
  await run;
});

test('failures are logged, retried next tick, and every third consecutive one redials', async (t) => {
  const s = await setup();
  s.client.down = true;
  const run = s.updater.run(s.ac.signal);
  await s.clock.advance(0);
  for (let i = 0; i < 5; i++) await s.clock.advance(10_000);
  t.is(s.log.find('unable to update node status').length, 6);
  t.is(s.redials(), 2);
  s.client.down = false;
  await s.clock.advance(10_000);
  t.is(s.statusPatches().length, 1);
  s.ac.abort();
  await run;
});
