import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { filterNode } from '../../../../apiserver/scheduler/filters';
import { adjusted, eligibleToPreempt, findCandidates, pickOneNode, selectVictimsOnNode, splitByBudgets, type Candidate, type NodePod } from '../../../../apiserver/scheduler/preemption';
import { podInfo, type NodeInfo } from '../../../../apiserver/scheduler/node-info';
import { podRequests } from '../../../../apiserver/scheduler/resources';
import { info, node, pod } from './objects';

// A fixed clock: "now" for pods that have not started.
const NOW = Date.parse('2025-03-01T12:00:00Z');
const fits = (p: ReturnType<typeof podInfo>, n: NodeInfo) => filterNode(p, n).length === 0;

function running(name: string, priority: number, cpu: string, o: { startedMinutesAgo?: number; labels?: Record<string, string>; terminating?: boolean } = {}): KObject {
  const p = pod(name, { requests: { cpu }, spec: { priority } });
  if (o.labels) p.metadata.labels = o.labels;
  if (o.terminating) p.metadata.deletionTimestamp = '2025-03-01T11:59:00Z';
  p.status = { phase: 'Running', ...(o.startedMinutesAgo !== undefined ? { startTime: new Date(NOW - o.startedMinutesAgo * 60_000).toISOString() } : {}) };
  return p;
}
const onNode = (...pods: KObject[]): NodePod[] => pods.map((p) => ({ pod: p, requests: podRequests(p), nonZero: podRequests(p, true) }));
/** A 4-cpu node holding these pods. */
function full(name: string, pods: NodePod[]): NodeInfo {
  return adjusted(info(node(name, { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } })), pods, 1);
}
const preemptor = (priority: number, cpu: string, spec: Record<string, unknown> = {}) => podInfo(pod('high', { requests: { cpu }, spec: { priority, ...spec } }));
const names = (c: Candidate | undefined) => c?.victims.map((v) => v.metadata.name);

test('victims: only lower-priority pods, the least important given up first; the rest reprieved', (t) => {
  const pods = onNode(running('equal', 100, '1'), running('low-old', 1, '1', { startedMinutesAgo: 60 }), running('low-new', 1, '1', { startedMinutesAgo: 1 }), running('lowest', 0, '1'));
  const c = selectVictimsOnNode(preemptor(100, '2'), full('n', pods), pods, [], fits, NOW);
  // Two cpus must go: lowest (priority 0) and, of the two priority-1 pods, the one started later.
  t.deepEqual(names(c), ['low-new', 'lowest']);
  t.is(c?.pdbViolations, 0);
  // Nothing lower-priority frees enough: no candidate.
  t.is(selectVictimsOnNode(preemptor(1, '2'), full('n', pods), pods, [], fits, NOW), undefined);
});

test('budgets: pods a PodDisruptionBudget cannot spare are reprieved first and counted when they must go', (t) => {
  const pdb: KObject = { metadata: { name: 'b', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'db' } } }, status: { disruptionsAllowed: 1 } };
  const pods = onNode(running('db-1', 1, '1', { labels: { app: 'db' } }), running('db-2', 1, '1', { labels: { app: 'db' } }), running('web', 1, '1'));
  const split = splitByBudgets(pods, [pdb]);
  t.deepEqual([split.violating.map((p) => p.pod.metadata.name), split.nonViolating.map((p) => p.pod.metadata.name)], [['db-2'], ['db-1', 'web']]);
  // One cpu needed beyond the free one: the violating db-2 is reprieved, one other goes.
  const c = selectVictimsOnNode(preemptor(100, '2'), full('n', pods), pods, [pdb], fits, NOW);
  t.is(c?.pdbViolations, 0);
  t.is(c?.victims.length, 1);
  // Three cpus: db-2 must go too, a violation.
  const all = selectVictimsOnNode(preemptor(100, '4'), full('n', pods), pods, [pdb], fits, NOW);
  t.is(all?.pdbViolations, 1);
  t.is(all?.victims.length, 3);
});

test('choosing the node: fewest violations, lowest highest victim, smallest sum, fewest victims, latest start, first', (t) => {
  const c = (node: string, pdbViolations: number, ...victims: KObject[]): Candidate => ({ node, pdbViolations, victims });
  const v = (name: string, priority: number, startedMinutesAgo?: number) => running(name, priority, '1', { startedMinutesAgo });
  t.is(pickOneNode([c('a', 1, v('x', 1)), c('b', 0, v('y', 50))], NOW)?.node, 'b');
  t.is(pickOneNode([c('a', 0, v('x', 50)), c('b', 0, v('y', 10), v('z', 10))], NOW)?.node, 'b');
  t.is(pickOneNode([c('a', 0, v('x', 10), v('w', 9)), c('b', 0, v('y', 10), v('z', 1))], NOW)?.node, 'b');
  // Sums offset by 2^31 each: two victims (10, -5) weigh more than one (10), as upstream counts them.
  t.is(pickOneNode([c('a', 0, v('x', 10), v('w', -5)), c('b', 0, v('y', 10), v('z', -5)), c('c', 0, v('q', 10))], NOW)?.node, 'c');
  // Ties so far: the node whose highest-priority victims started latest.
  t.is(pickOneNode([c('a', 0, v('x', 10, 60)), c('b', 0, v('y', 10, 5))], NOW)?.node, 'b');
  t.is(pickOneNode([c('a', 0, v('x', 10, 5)), c('b', 0, v('y', 10, 5))], NOW)?.node, 'a');
  t.is(pickOneNode([c('a', 0, v('x', 1)), c('b', 0)], NOW)?.node, 'b');
  t.is(pickOneNode([], NOW), undefined);
});

test('candidates across nodes: a node whose taint the preemptor does not tolerate is none', (t) => {
  const podsA = onNode(running('a-low', 1, '4'));
  const podsB = onNode(running('b-low', 1, '4'));
  const a = full('a', podsA);
  const b: NodeInfo = { ...full('b', podsB), taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] };
  const cs = findCandidates(preemptor(10, '1'), [a, b], (n) => (n === 'a' ? podsA : podsB), [], fits, NOW);
  t.deepEqual(cs.map((x) => x.node), ['a']);
});

test('eligibility: never with preemptionPolicy Never, nor while victims on its nominated node are terminating', (t) => {
  const none = () => [];
  t.false(eligibleToPreempt(preemptor(10, '1', { preemptionPolicy: 'Never' }).pod, none));
  t.true(eligibleToPreempt(preemptor(10, '1').pod, none));
  const nominated = { ...preemptor(10, '1').pod, status: { nominatedNodeName: 'a' } };
  t.false(eligibleToPreempt(nominated, () => onNode(running('going', 1, '1', { terminating: true }))));
  t.true(eligibleToPreempt(nominated, () => onNode(running('higher-going', 20, '1', { terminating: true }), running('low', 1, '1'))));
});
