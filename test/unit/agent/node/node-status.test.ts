import test from 'ava';
import { changedFields, microTime, rfc3339, stampConditions, statusPatch, type DesiredNodeStatus } from '../../../../agent/node/node-status';

const desired = (): DesiredNodeStatus => ({
  daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
  addresses: [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'a' }],
  capacity: { cpu: '4', memory: '8Ki', pods: '110', 'ephemeral-storage': '1Ki' },
  allocatable: { cpu: '4', memory: '8Ki', pods: '110', 'ephemeral-storage': '1Ki' },
  conditions: [
    { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'ok' },
    { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' },
  ],
  nodeInfo: {
    machineID: 'm',
    systemUUID: 'u',
    bootID: 'b',
    kernelVersion: 'k',
    osImage: 'o',
    containerRuntimeVersion: 'unknown://',
    kubeletVersion: 'v0.1.0',
    kubeProxyVersion: '',
    operatingSystem: 'linux',
    architecture: 'amd64',
  },
  declaredFeatures: ['ContainerCheckpoint'],
});

const serverCopy = (d: DesiredNodeStatus, t = '2025-01-01T00:00:00Z') => ({
  ...JSON.parse(JSON.stringify(d)),
  conditions: d.conditions.map((c) => ({ ...c, lastHeartbeatTime: t, lastTransitionTime: t })),
});

test('heartbeat times alone are not a change', (t) => {
  const d = desired();
  t.is(changedFields(serverCopy(d), d).size, 0);
});

test('a condition status, reason or message change is a change; so is any other field', (t) => {
  const d = desired();
  const s = serverCopy(d);
  s.conditions[1].status = 'Unknown';
  t.deepEqual([...changedFields(s, d)], ['conditions']);
  const s2 = serverCopy(d);
  s2.capacity.cpu = '2';
  s2.declaredFeatures = [];
  t.deepEqual([...changedFields(s2, d)].sort(), ['capacity', 'declaredFeatures']);
  t.deepEqual([...changedFields(undefined, d)].sort(), ['addresses', 'allocatable', 'capacity', 'conditions', 'daemonEndpoints', 'declaredFeatures', 'nodeInfo']);
});

test('lastTransitionTime is kept while the status holds and moves when it flips', (t) => {
  const d = desired();
  const s = serverCopy(d, '2024-06-01T00:00:00Z');
  s.conditions[1].status = 'Unknown';
  const stamped = stampConditions(s, d.conditions, '2025-02-02T00:00:00Z');
  t.is(stamped[0].lastTransitionTime, '2024-06-01T00:00:00Z');
  t.is(stamped[0].lastHeartbeatTime, '2025-02-02T00:00:00Z');
  t.is(stamped[1].lastTransitionTime, '2025-02-02T00:00:00Z');
});

test('the status patch carries every owned condition and only the changed fields; addresses replace, removed map keys are nulled', (t) => {
  const d = desired();
  const s = serverCopy(d);
  s.addresses = [{ type: 'InternalIP', address: '10.0.0.9' }];
  s.capacity['hugepages-2Mi'] = '0';
  const p = statusPatch(s, d, '2025-01-01T00:00:10Z');
  t.deepEqual(Object.keys(p.status).sort(), ['addresses', 'capacity', 'conditions']);
  t.deepEqual(p.status['addresses'], [{ $patch: 'replace' }, ...d.addresses]);
  t.is((p.status['capacity'] as Record<string, unknown>)['hugepages-2Mi'], null);
  t.is((p.status['conditions'] as unknown[]).length, 2);
});

test('time formats: RFC 3339 seconds and microseconds', (t) => {
  const ms = Date.UTC(2025, 0, 2, 3, 4, 5, 678);
  t.is(rfc3339(ms), '2025-01-02T03:04:05Z');
  t.is(microTime(ms), '2025-01-02T03:04:05.678000Z');
});
