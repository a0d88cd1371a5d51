/** The node admission gate: the configured capacity until the Node is read, the Node's allocatable, labels and taints after, refused pods remembered. */
import test from 'ava';
import { nodesResource } from '../../../../agent/client/resources';
import { NodeAdmissionGate } from '../../../../agent/pod/node-admission-gate';
import type { Pod, PodStatus } from '../../../../agent/api/core-v1';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';

const NODE = 'node-1';

function pod(name: string, o: { cpu?: string; phase?: string; nodeSelector?: Record<string, string> } = {}): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: {
      nodeName: NODE,
      containers: [{ name: 'c', image: 'busybox', ...(o.cpu ? { resources: { requests: { cpu: o.cpu } } } : {}) }],
      ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
    },
    ...(o.phase ? { status: { phase: o.phase } } : {}),
  } as Pod;
}

function setup(admitted: Pod[] = []) {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const log = new MemLog();
  const rejected: { pod: string; status: PodStatus }[] = [];
  const gate = new NodeAdmissionGate({
    client,
    clock,
    log,
    nodeName: NODE,
    nodeCpuMilli: 2000,
    nodeMemoryBytes: 2 ** 30,
    maxPods: 3,
    admitted: () => admitted,
    onReject: (p, status) => rejected.push({ pod: p.metadata.name ?? '', status }),
  });
  return { client, clock, log, gate, rejected, admitted };
}

test('until the Node is read, the configured capacity counts; a refused pod gets Failed with the reason and stays refused until forgotten', (t) => {
  const s = setup([pod('running', { cpu: '1500m' })]);
  t.true(s.gate.admit(pod('small', { cpu: '500m' })));
  const big = pod('big', { cpu: '1' });
  t.false(s.gate.admit(big));
  t.is(s.rejected.length, 1);
  t.like(s.rejected[0].status, { phase: 'Failed', reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000", startTime: '2025-01-01T00:00:00.000Z' });
  t.is(s.log.find('pod rejected by node admission').length, 1);
  s.admitted.length = 0;
  t.false(s.gate.admit(big), 'not looked at again, even though it would fit now');
  t.is(s.rejected.length, 1);
  t.true(s.gate.forget('uid-big'));
  t.false(s.gate.forget('uid-big'));
  t.true(s.gate.admit(big));
});

test('pods in a terminal phase or being deleted pass without a check', (t) => {
  const s = setup([pod('a'), pod('b'), pod('c')]);
  t.false(s.gate.admit(pod('d')), 'maxPods 3 reached');
  t.true(s.gate.admit(pod('done', { phase: 'Succeeded' })));
  t.true(s.gate.admit(pod('failed', { phase: 'Failed' })));
  const deleting = pod('deleting');
  deleting.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
  t.true(s.gate.admit(deleting));
});

test("after refreshNode the Node's allocatable, labels and taints count; a failed read keeps the last view", async (t) => {
  const s = setup([pod('running')]);
  await s.gate.refreshNode(new AbortController().signal);
  t.is(s.log.find('cannot read the node for pod admission yet').length, 1);
  t.true(s.gate.admit(pod('p1', { nodeSelector: {} })), 'configured capacity while the Node is missing');
  s.client.seed(nodesResource, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE, labels: { zone: 'a' } },
    spec: { taints: [{ key: 'dedicated', value: 'x', effect: 'NoExecute' }] },
    status: { allocatable: { cpu: '4', memory: '1Gi', pods: '2' } },
  });
  await s.gate.refreshNode(new AbortController().signal);
  t.false(s.gate.admit(pod('tainted')));
  t.is(s.rejected.at(-1)!.status.reason, 'TaintToleration');
  const sel = pod('elsewhere', { nodeSelector: { zone: 'b' } });
  sel.spec.tolerations = [{ key: 'dedicated', operator: 'Exists' }];
  t.false(s.gate.admit(sel));
  t.is(s.rejected.at(-1)!.status.reason, 'NodeAffinity');
  const fits = pod('fits', { cpu: '3', nodeSelector: { zone: 'a' } });
  fits.spec.tolerations = [{ key: 'dedicated', operator: 'Exists' }];
  t.true(s.gate.admit(fits), '3 CPUs fit the 4 the Node reports, not the 2 configured');
  s.admitted.push(pod('second'));
  t.false(s.gate.admit(pod('third')));
  t.is(s.rejected.at(-1)!.status.reason, 'OutOfpods', 'the Node allows 2 pods');
  s.client.remove(nodesResource, NODE);
  await s.gate.refreshNode(new AbortController().signal);
  const again = pod('fits-again', { cpu: '3', nodeSelector: { zone: 'a' } });
  again.spec.tolerations = [{ key: 'dedicated', operator: 'Exists' }];
  s.admitted.length = 1;
  t.true(s.gate.admit(again), 'the last Node read still counts');
});
