import test from 'ava';
import { matchingTolerations } from '../../../../apiserver/controllers/taint-eviction';
import { nodeUnschedulable, taintToleration } from '../../../../apiserver/scheduler/filters';
import { podInfo } from '../../../../apiserver/scheduler/node-info';
import { tolerates, type Toleration } from '../../../../apiserver/scheduler/taints';
import { info, node, pod } from './objects';

// Issue 17, item 3: the controllers set node.svc.io taints; tolerations in upstream's spelling
// (node.kubernetes.io/...) tolerate them, and the reverse.

const tol = (t: Partial<Toleration>): Toleration => ({ key: '', operator: 'Exists', value: '', effect: '', ...t });

test('a toleration tolerates the taint in the other spelling, and only that taint', (t) => {
  t.true(tolerates(tol({ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }), { key: 'node.svc.io/not-ready', value: '', effect: 'NoExecute' }));
  t.true(tolerates(tol({ key: 'node.svc.io/unreachable' }), { key: 'node.kubernetes.io/unreachable', value: '', effect: 'NoExecute' }));
  t.false(tolerates(tol({ key: 'node.kubernetes.io/not-ready' }), { key: 'node.svc.io/unreachable', value: '', effect: 'NoExecute' }));
  t.false(tolerates(tol({ key: 'dedicated' }), { key: 'example.com/dedicated', value: '', effect: 'NoSchedule' }));
});

test('the scheduler: a cordoned or tainted node takes a pod whose tolerations use upstream keys', (t) => {
  const cordoned = info(node('n', { unschedulable: true, taints: [{ key: 'node.svc.io/unschedulable', effect: 'NoSchedule' }] }));
  const stock = podInfo(pod('p', { spec: { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] } }));
  const plain = podInfo(pod('q'));
  t.deepEqual(nodeUnschedulable(stock, cordoned), []);
  t.deepEqual(taintToleration(stock, cordoned), []);
  t.deepEqual(nodeUnschedulable(plain, cordoned), ['node(s) were unschedulable']);
  const pressured = info(node('m', { taints: [{ key: 'node.svc.io/memory-pressure', effect: 'NoSchedule' }] }));
  t.deepEqual(taintToleration(podInfo(pod('r', { spec: { tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists' }] } })), pressured), []);
});

test('taint eviction: tolerationSeconds of an upstream-spelled toleration bound the eviction of a pod on a not-ready node', (t) => {
  const taints = [{ key: 'node.svc.io/not-ready', value: '', effect: 'NoExecute' }];
  const { all, used } = matchingTolerations(taints, [tol({ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', tolerationSeconds: 30 })]);
  t.true(all);
  t.is(used[0].tolerationSeconds, 30);
  t.false(matchingTolerations(taints, [tol({ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' })]).all);
});
