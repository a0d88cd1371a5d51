import test from 'ava';
import { podInfo } from '../../../../apiserver/scheduler/node-info';
import { intolerablePreferNoSchedule, leastAllocatedScore, normalizeReverse, scoreNodes } from '../../../../apiserver/scheduler/scoring';
import { selectHost } from '../../../../apiserver/scheduler/select-host';
import { filterNode } from '../../../../apiserver/scheduler/filters';
import { info, node, pod } from './objects';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

const least: Array<[string, ReturnType<typeof pod>, ReturnType<typeof info>, number]> = [
  // cpu (4000 − 1000) × 100 / 4000 = 75; memory (8Gi − 2Gi) × 100 / 8Gi = 75
  ['empty node', pod('p', { requests: { cpu: '1', memory: '2Gi' } }), info(node('n')), 75],
  // cpu (4000 − 3000)/4000 = 25; memory (8 − 4)/8 = 50 → (25 + 50) / 2 = 37
  ['half-used node', pod('p', { requests: { cpu: '1', memory: '2Gi' } }), info(node('n'), { nonZero: { cpu: 2000, memory: 2 * GiB } }), 37],
  // no requests: 100m and 200Mi count; cpu 3900×100/4000 = 97; memory (8192−200)×100/8192 = 97
  ['pod without requests counts the defaults', pod('p'), info(node('n')), 97],
  ['over-committed node scores 0 for that resource', pod('p', { requests: { cpu: '5', memory: '4Gi' } }), info(node('n')), 25],
  ['a node offering nothing scores 0', pod('p'), info(node('n', { allocatable: { pods: '10' } })), 0],
];
for (const [name, p, n, want] of least) {
  test(`leastAllocatedScore: ${name}`, (t) => {
    t.is(leastAllocatedScore(podInfo(p), n), want);
  });
}

test('PreferNoSchedule taints the pod does not tolerate are counted', (t) => {
  const n = info(node('n', { taints: [{ key: 'a', effect: 'PreferNoSchedule' }, { key: 'b', effect: 'PreferNoSchedule' }, { key: 'c', effect: 'NoSchedule' }] }));
  t.is(intolerablePreferNoSchedule(podInfo(pod('p')), n), 2);
  t.is(intolerablePreferNoSchedule(podInfo(pod('p', { spec: { tolerations: [{ key: 'a', operator: 'Exists', effect: 'PreferNoSchedule' }] } })), n), 1);
  // A NoSchedule toleration does not help with PreferNoSchedule (upstream only counts '' and PreferNoSchedule effects).
  t.is(intolerablePreferNoSchedule(podInfo(pod('p', { spec: { tolerations: [{ key: 'a', operator: 'Exists', effect: 'NoSchedule' }] } })), n), 2);
  t.is(intolerablePreferNoSchedule(podInfo(pod('p', { spec: { tolerations: [{ operator: 'Exists' }] } })), n), 0);
});

test('normalizeReverse: fewer taints score higher', (t) => {
  t.deepEqual(normalizeReverse([0, 1, 2]), [100, 50, 0]);
  t.deepEqual(normalizeReverse([0, 0]), [100, 100]);
  t.deepEqual(normalizeReverse([3, 1]), [0, 67]);
});

test('scoreNodes: taint preference outweighs a small allocation difference', (t) => {
  const p = podInfo(pod('p', { requests: { cpu: '1', memory: '1Gi' } }));
  const soft = info(node('soft', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] }));
  const busy = info(node('busy'), { nonZero: { cpu: 1000, memory: GiB } });
  const [a, b] = scoreNodes(p, [soft, busy]);
  t.true(b > a, `busy ${b} should beat soft ${a}`);
});

test('selectHost takes the least allocated node, ties by order', (t) => {
  const p = podInfo(pod('p', { requests: { cpu: '500m', memory: '256Mi' } }));
  const n1 = info(node('n1'), { nonZero: { cpu: 2000, memory: 1024 * MiB } });
  const n2 = info(node('n2'));
  const n3 = info(node('n3'));
  const r = selectHost(p, [n1, n2, n3], filterNode);
  t.true('node' in r && r.node.name === 'n2');
});

test('selectHost skips infeasible nodes and reports every rejection when nothing fits', (t) => {
  const p = podInfo(pod('p', { requests: { cpu: '3' } }));
  const full = info(node('full'), { requested: { cpu: 2000 } });
  const tainted = info(node('tainted', { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] }));
  const ok = info(node('ok'));
  const r1 = selectHost(p, [full, tainted, ok], filterNode);
  t.true('node' in r1 && r1.node.name === 'ok');
  const r2 = selectHost(p, [full, tainted], filterNode);
  t.true('reasons' in r2);
  if ('reasons' in r2) t.deepEqual([...r2.reasons], [['full', ['Insufficient cpu']], ['tainted', ['node(s) had untolerated taint {k: v}']]]);
});
