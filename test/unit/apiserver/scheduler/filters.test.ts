import test from 'ava';
import { filterNode, fitErrorMessage, nodeAffinity, nodeReady, nodeUnschedulable, resourcesFit, taintToleration, type Filter } from '../../../../apiserver/scheduler/filters';
import { podInfo } from '../../../../apiserver/scheduler/node-info';
import { info, node, pod } from './objects';

interface Case {
  name: string;
  filter: Filter;
  pod: ReturnType<typeof pod>;
  node: ReturnType<typeof info>;
  want: string[];
}

const GiB = 1024 ** 3;
const cases: Case[] = [
  { name: 'unschedulable: cordoned node', filter: nodeUnschedulable, pod: pod('p'), node: info(node('n', { unschedulable: true })), want: ['node(s) were unschedulable'] },
  {
    name: 'unschedulable: tolerated cordon',
    filter: nodeUnschedulable,
    pod: pod('p', { spec: { tolerations: [{ key: 'node.svc.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] } }),
    node: info(node('n', { unschedulable: true })),
    want: [],
  },
  { name: 'unschedulable: schedulable node', filter: nodeUnschedulable, pod: pod('p'), node: info(node('n')), want: [] },
  {
    name: 'taints: untolerated NoSchedule',
    filter: taintToleration,
    pod: pod('p'),
    node: info(node('n', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] })),
    want: ['node(s) had untolerated taint {dedicated: gpu}'],
  },
  {
    name: 'taints: untolerated NoExecute',
    filter: taintToleration,
    pod: pod('p'),
    node: info(node('n', { taints: [{ key: 'node.svc.io/not-ready', effect: 'NoExecute' }] })),
    want: ['node(s) had untolerated taint {node.svc.io/not-ready: }'],
  },
  {
    name: 'taints: PreferNoSchedule does not filter',
    filter: taintToleration,
    pod: pod('p'),
    node: info(node('n', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] })),
    want: [],
  },
  {
    name: 'taints: tolerated',
    filter: taintToleration,
    pod: pod('p', { spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] } }),
    node: info(node('n', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] })),
    want: [],
  },
  { name: 'ready: Ready False', filter: nodeReady, pod: pod('p'), node: info(node('n', { ready: 'False' })), want: ['node(s) were not ready'] },
  { name: 'ready: Ready Unknown', filter: nodeReady, pod: pod('p'), node: info(node('n', { ready: 'Unknown' })), want: ['node(s) were not ready'] },
  { name: 'ready: Ready True', filter: nodeReady, pod: pod('p'), node: info(node('n')), want: [] },
  { name: 'affinity: nodeSelector mismatch', filter: nodeAffinity, pod: pod('p', { spec: { nodeSelector: { disk: 'ssd' } } }), node: info(node('n')), want: ["node(s) didn't match Pod's node affinity/selector"] },
  { name: 'affinity: nodeSelector match', filter: nodeAffinity, pod: pod('p', { spec: { nodeSelector: { disk: 'ssd' } } }), node: info(node('n', { labels: { disk: 'ssd' } })), want: [] },
  { name: 'resources: fits', filter: resourcesFit, pod: pod('p', { requests: { cpu: '1', memory: '1Gi' } }), node: info(node('n'), { requested: { cpu: 3000, memory: 7 * GiB }, pods: 5 }), want: [] },
  { name: 'resources: cpu short', filter: resourcesFit, pod: pod('p', { requests: { cpu: '1100m' } }), node: info(node('n'), { requested: { cpu: 3000 } }), want: ['Insufficient cpu'] },
  {
    name: 'resources: cpu and memory short, both listed',
    filter: resourcesFit,
    pod: pod('p', { requests: { cpu: '5', memory: '9Gi' } }),
    node: info(node('n')),
    want: ['Insufficient cpu', 'Insufficient memory'],
  },
  {
    name: 'resources: ephemeral-storage short',
    filter: resourcesFit,
    pod: pod('p', { requests: { 'ephemeral-storage': '200Gi' } }),
    node: info(node('n')),
    want: ['Insufficient ephemeral-storage'],
  },
  { name: 'resources: pods full', filter: resourcesFit, pod: pod('p'), node: info(node('n', { allocatable: { cpu: '4', memory: '8Gi', pods: '2' } }), { pods: 2 }), want: ['Too many pods'] },
  { name: 'resources: extended resource the node lacks', filter: resourcesFit, pod: pod('p', { requests: { 'vendor.example/gpu': '1' } }), node: info(node('n')), want: ['Insufficient vendor.example/gpu'] },
  {
    name: 'resources: extended resource in use',
    filter: resourcesFit,
    pod: pod('p', { requests: { 'vendor.example/gpu': '2' } }),
    node: info(node('n', { allocatable: { cpu: '4', memory: '8Gi', pods: '110', 'vendor.example/gpu': '4' } }), { requested: { 'vendor.example/gpu': 3 } }),
    want: ['Insufficient vendor.example/gpu'],
  },
  {
    name: 'resources: extended resource free',
    filter: resourcesFit,
    pod: pod('p', { requests: { 'vendor.example/gpu': '1' } }),
    node: info(node('n', { allocatable: { cpu: '4', memory: '8Gi', pods: '110', 'vendor.example/gpu': '4' } }), { requested: { 'vendor.example/gpu': 3 } }),
    want: [],
  },
  {
    name: 'resources: init container larger than what is free',
    filter: resourcesFit,
    pod: pod('p', { requests: { cpu: '100m' }, init: [{ requests: { cpu: '2' } }] }),
    node: info(node('n'), { requested: { cpu: 2500 } }),
    want: ['Insufficient cpu'],
  },
  { name: 'resources: zero requests only need a pod slot', filter: resourcesFit, pod: pod('p'), node: info(node('n'), { requested: { cpu: 4000, memory: 8 * GiB } }), want: [] },
];
for (const c of cases) {
  test(`filter ${c.name}`, (t) => {
    t.deepEqual(c.filter(podInfo(c.pod), c.node), c.want);
  });
}

test('filterNode reports the first failing filter only, in plugin order', (t) => {
  const n = info(node('n', { unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }], ready: 'False' }));
  t.deepEqual(filterNode(podInfo(pod('p', { requests: { cpu: '10' } })), n), ['node(s) were unschedulable']);
  const tainted = info(node('n', { taints: [{ key: 'k', effect: 'NoSchedule' }], ready: 'False' }));
  t.deepEqual(filterNode(podInfo(pod('p')), tainted), ['node(s) had untolerated taint {k: }']);
  t.deepEqual(filterNode(podInfo(pod('p')), info(node('n'))), []);
});

test('fitErrorMessage builds upstream\'s sorted histogram', (t) => {
  const reasons = new Map<string, string[]>([
    ['n1', ['Insufficient cpu']],
    ['n2', ['node(s) had untolerated taint {dedicated: gpu}']],
    ['n3', ['node(s) had untolerated taint {dedicated: gpu}']],
  ]);
  t.is(fitErrorMessage(3, reasons), '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}.');
  t.is(
    fitErrorMessage(2, new Map([['a', ['Insufficient cpu', 'Insufficient memory']], ['b', ['Insufficient memory']]])),
    '0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory.',
  );
  t.is(fitErrorMessage(0, new Map()), 'no nodes available to schedule pods');
});
