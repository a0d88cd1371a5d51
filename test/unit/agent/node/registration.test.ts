import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { ClientError } from '../../../../agent/client/client-error';
import { nodesResource } from '../../../../agent/client/resources';
import { NodeRegistrar } from '../../../../agent/node/registration';
import { ProgressTracker } from '../../../../agent/node/progress';
import { FakeApiClient } from './fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';
import { identity, testStatus } from './fakes/fixtures';
import { MemLog } from './fakes/mem-log';

function setup(extraLabels: Record<string, string> = {}) {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const log = new MemLog();
  const status = testStatus();
  const id = identity('node-a', extraLabels);
  const registrar = new NodeRegistrar({ client, clock, log, identity: id, status: status.source, progress: new ProgressTracker(clock) });
  return { client, clock, log, status, registrar, id };
}

test('creates the Node with labels, addresses, capacity, info and conditions', async (t) => {
  const { client, registrar } = setup({ 'example.com/role': 'edge' });
  const node = await registrar.register(new AbortController().signal);
  t.truthy(node);
  const stored = client.peek(nodesResource, 'node-a')!;
  // Both spellings of each well-known label (issue 17): stock manifests select kubernetes.io/os.
  t.deepEqual(stored.metadata.labels, {
    'example.com/role': 'edge',
    'svc.io/arch': 'amd64',
    'svc.io/hostname': 'node-a',
    'svc.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': 'node-a',
    'kubernetes.io/os': 'linux',
  });
  const status = stored['status'] as Record<string, any>;
  t.deepEqual(status['addresses'], [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'node-a' }]);
  t.is(status['capacity'].pods, '110');
  t.is(status['allocatable'].cpu, '4');
  t.is(status['nodeInfo'].operatingSystem, 'linux');
  t.is(status['nodeInfo'].machineID, 'machine-1');
  t.deepEqual(status['conditions'].map((c: any) => c.type), ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready']);
  t.truthy(status['conditions'][3].lastHeartbeatTime);
  t.deepEqual(status['declaredFeatures'], ['ContainerCheckpoint']);
  t.is(registrar.nodeUid, stored.metadata.uid);
});

test('registerWithTaints are set on create', async (t) => {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const id = { ...identity(), taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' as const }] };
  await new NodeRegistrar({ client, clock, log: new MemLog(), identity: id, status: testStatus().source }).register(new AbortController().signal);
  t.deepEqual((client.peek(nodesResource, 'node-a')!['spec'] as any).taints, [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]);
});

test('keeps retrying with exponential back-off while the API server is down, logging each failure', async (t) => {
  const { client, clock, log, registrar } = setup();
  client.down = true;
  let result: KObject | undefined;
  const done = registrar.register(new AbortController().signal).then((n) => (result = n));
  await clock.advance(100 + 200 + 400 + 800);
  t.is(client.callsOf('create').length, 5);
  t.deepEqual(clock.requested.slice(0, 5), [100, 200, 400, 800, 1600]);
  const lines = log.find('API server unreachable');
  t.is(lines.length, 5);
  t.is(lines[0].level, 'warn');
  t.is(lines[0].obj['node'], 'node-a');
  t.regex(String(lines[0].obj['error']), /ECONNREFUSED/);
  t.is(result, undefined);
  client.down = false;
  await clock.advance(1600);
  await done;
  t.truthy(result);
  t.truthy(client.peek(nodesResource, 'node-a'));
});

test('back-off is capped at 7 s', async (t) => {
  const { client, clock, registrar } = setup();
  client.down = true;
  const ac = new AbortController();
  const done = registrar.register(ac.signal);
  await clock.advance(60_000);
  t.is(Math.max(...clock.requested), 7000);
  ac.abort();
  t.is(await done, undefined);
});

test('an existing Node is reconciled: our labels and the status are patched, other labels are left alone', async (t) => {
  const { client, registrar, log } = setup({ tier: 'gold' });
  client.seed(nodesResource, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-a', labels: { 'svc.io/arch': 'arm64', 'svc.io/hostname': 'node-a', 'svc.io/os': 'linux', 'team.example/owner': 'ops' } },
    spec: {},
    status: {
      addresses: [{ type: 'InternalIP', address: '10.0.0.99' }],
      conditions: [
        { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', lastHeartbeatTime: '2024-01-01T00:00:00Z', lastTransitionTime: '2024-01-01T00:00:00Z' },
        { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated' },
      ],
    },
  });
  const node = await registrar.register(new AbortController().signal);
  t.truthy(node);
  const labelPatch = client.callsOf('patch').find((c) => c.subresource === undefined)!;
  // A Node registered before the kubernetes.io labels existed gets them on the agent's next start.
  t.deepEqual(labelPatch.body, { metadata: { labels: { 'svc.io/arch': 'amd64', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': 'node-a', 'kubernetes.io/os': 'linux', tier: 'gold' } } });
  const stored = client.peek(nodesResource, 'node-a')!;
  t.is(stored.metadata.labels!['team.example/owner'], 'ops');
  t.is(stored.metadata.labels!['svc.io/arch'], 'amd64');
  const st = stored['status'] as any;
  t.deepEqual(st.addresses, [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'node-a' }]);
  const ready = st.conditions.find((c: any) => c.type === 'Ready');
  t.is(ready.status, 'True');
  t.not(ready.lastTransitionTime, '2024-01-01T00:00:00Z');
  t.truthy(st.conditions.find((c: any) => c.type === 'NetworkUnavailable'), 'conditions owned by others survive');
  t.is(log.find('reconciled').length, 1);
  t.is(registrar.nodeUid, stored.metadata.uid);
});

test('non-connection errors are logged at error level and retried', async (t) => {
  const { client, clock, log, registrar } = setup();
  client.failNext((c) => c.verb === 'create', () => new ClientError(403, 'Forbidden', 'nodes is forbidden: User "x" cannot create resource "nodes"'));
  const done = registrar.register(new AbortController().signal);
  await clock.advance(100);
  t.truthy(await done);
  const line = log.find('unable to register node with the API server')[0];
  t.is(line.level, 'error');
  t.is(line.obj['code'], 403);
});
