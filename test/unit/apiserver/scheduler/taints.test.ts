import test from 'ava';
import { firstUntolerated, nodeTaints, podTolerations, tolerates, untoleratedTaintReason, type Taint, type Toleration } from '../../../../apiserver/scheduler/taints';
import { node, pod } from './objects';

const taint = (key: string, value: string, effect: string): Taint => ({ key, value, effect });
const tol = (t: Partial<Toleration>): Toleration => ({ key: '', operator: '', value: '', effect: '', ...t });

const cases: Array<[string, Toleration, Taint, boolean]> = [
  ['Equal with same key, value and effect', tol({ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }), taint('k', 'v', 'NoSchedule'), true],
  ['empty operator means Equal', tol({ key: 'k', value: 'v', effect: 'NoSchedule' }), taint('k', 'v', 'NoSchedule'), true],
  ['Equal with another value', tol({ key: 'k', operator: 'Equal', value: 'w', effect: 'NoSchedule' }), taint('k', 'v', 'NoSchedule'), false],
  ['Exists ignores the value', tol({ key: 'k', operator: 'Exists', effect: 'NoExecute' }), taint('k', 'anything', 'NoExecute'), true],
  ['empty effect matches every effect', tol({ key: 'k', operator: 'Exists' }), taint('k', '', 'NoExecute'), true],
  ['another effect does not match', tol({ key: 'k', operator: 'Exists', effect: 'NoSchedule' }), taint('k', '', 'NoExecute'), false],
  ['another key does not match', tol({ key: 'j', operator: 'Exists' }), taint('k', '', 'NoSchedule'), false],
  ['empty key with Exists matches every taint', tol({ operator: 'Exists' }), taint('any', 'x', 'PreferNoSchedule'), true],
  ['an unknown operator never matches', tol({ key: 'k', operator: 'Gt', value: '1' }), taint('k', '2', 'NoSchedule'), false],
];
for (const [name, t1, t2, want] of cases) {
  test(`tolerates: ${name}`, (t) => {
    t.is(tolerates(t1, t2), want);
  });
}

test('firstUntolerated looks only at the given effects, in taint order', (t) => {
  const taints = [taint('soft', '', 'PreferNoSchedule'), taint('a', '1', 'NoSchedule'), taint('b', '', 'NoExecute')];
  t.deepEqual(firstUntolerated(taints, [], ['NoSchedule', 'NoExecute']), taints[1]);
  t.deepEqual(firstUntolerated(taints, [tol({ key: 'a', operator: 'Exists' })], ['NoSchedule', 'NoExecute']), taints[2]);
  t.is(firstUntolerated(taints, [tol({ operator: 'Exists' })], ['NoSchedule', 'NoExecute']), undefined);
  t.is(untoleratedTaintReason(taints[1]), 'node(s) had untolerated taint {a: 1}');
});

test('nodeTaints and podTolerations read the objects', (t) => {
  t.deepEqual(nodeTaints(node('n', { taints: [{ key: 'k', effect: 'NoSchedule' }] })), [{ key: 'k', value: '', effect: 'NoSchedule', timeAdded: undefined }]);
  t.deepEqual(podTolerations(pod('p', { spec: { tolerations: [{ key: 'k', operator: 'Exists', tolerationSeconds: 30 }] } })), [
    { key: 'k', operator: 'Exists', value: '', effect: '', tolerationSeconds: 30 },
  ]);
});
