/**
 * The agent's events about its Node (upstream's kubelet): Starting, condition transitions as
 * "Node <name> status is now: <reason>", Rebooted, NodeSchedulable / NodeNotSchedulable.
 */
import test from 'ava';
import { nodesResource } from '../../../../agent/client/resources';
import { NodeEvents } from '../../../../agent/node/node-events';
import { NodeRegistrar } from '../../../../agent/node/registration';
import { NodeStatusUpdater } from '../../../../agent/node/status-updater';
import { RecordingRecorder } from '../../../helpers/recording-recorder';
import { FakeClock } from '../../../helpers/fake-clock';
import { FakeApiClient } from './fakes/fake-api-client';
import { identity, testStatus } from './fakes/fixtures';
import { MemLog } from './fakes/mem-log';

function setup() {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const log = new MemLog();
  const status = testStatus();
  const recorder = new RecordingRecorder();
  const events = new NodeEvents(recorder, 'node-a');
  const registrar = new NodeRegistrar({ client, clock, log, identity: identity(), status: status.source, events });
  const updater = new NodeStatusUpdater({ client, clock, log, nodeName: 'node-a', status: status.source, updateFrequencyMs: 10_000, reportFrequencyMs: 300_000, events });
  return { client, clock, status, recorder, events, registrar, updater };
}

test('registration records the initial conditions, as a fresh kubelet does', async (t) => {
  const s = setup();
  s.events.starting();
  await s.registrar.register(new AbortController().signal);
  t.deepEqual(s.recorder.lines(), [
    'Starting: Starting kubelet.',
    'NodeHasSufficientMemory: Node node-a status is now: NodeHasSufficientMemory',
    'NodeHasNoDiskPressure: Node node-a status is now: NodeHasNoDiskPressure',
    'NodeHasSufficientPID: Node node-a status is now: NodeHasSufficientPID',
    'NodeReady: Node node-a status is now: NodeReady',
  ]);
  t.deepEqual(s.recorder.events[0].regarding, { kind: 'Node', name: 'node-a', uid: 'node-a' });
  t.true(s.recorder.events.every((e) => e.type === 'Normal'));
});

test('status syncs record only transitions from what the server has: pressure, readiness, and readiness again after the control plane marked it Unknown', async (t) => {
  const s = setup();
  await s.registrar.register(new AbortController().signal);
  s.recorder.events.length = 0;
  await s.updater.sync();
  t.deepEqual(s.recorder.lines(), [], 'nothing changed');
  s.status.pressure.memory = true;
  await s.updater.sync();
  t.deepEqual(s.recorder.lines(), ['NodeHasInsufficientMemory: Node node-a status is now: NodeHasInsufficientMemory']);
  s.client.mutate(nodesResource, 'node-a', undefined, (n) => {
    for (const c of (n['status'] as { conditions: Array<{ type: string; status: string }> }).conditions) if (c.type === 'MemoryPressure') c.status = 'Unknown';
  });
  await s.updater.sync();
  t.is(s.recorder.lines().at(-1), 'NodeHasInsufficientMemory: Node node-a status is now: NodeHasInsufficientMemory', 'the server had Unknown: the state is recorded again');
  s.status.readiness.add({ name: 'runtime', check: () => Promise.resolve('container runtime is down') });
  await s.updater.sync();
  t.is(s.recorder.lines().at(-1), 'NodeNotReady: Node node-a status is now: NodeNotReady');
});

test('Rebooted when the server has another boot id; NodeNotSchedulable and NodeSchedulable when the node is cordoned and uncordoned', async (t) => {
  const s = setup();
  await s.registrar.register(new AbortController().signal);
  s.recorder.events.length = 0;
  s.client.mutate(nodesResource, 'node-a', undefined, (n) => {
    (n['status'] as { nodeInfo: { bootID: string } }).nodeInfo.bootID = 'boot-0';
  });
  await s.updater.sync();
  t.deepEqual(s.recorder.events.map((e) => [e.type, e.reason, e.message]), [['Warning', 'Rebooted', 'Node node-a has been rebooted, boot id: boot-1']]);
  s.recorder.events.length = 0;
  s.client.mutate(nodesResource, 'node-a', undefined, (n) => void (n['spec'] = { unschedulable: true }));
  await s.updater.sync();
  await s.updater.sync();
  s.client.mutate(nodesResource, 'node-a', undefined, (n) => void (n['spec'] = {}));
  await s.updater.sync();
  t.deepEqual(s.recorder.lines(), ['NodeNotSchedulable: Node node-a status is now: NodeNotSchedulable', 'NodeSchedulable: Node node-a status is now: NodeSchedulable']);
});
