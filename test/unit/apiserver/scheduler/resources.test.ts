import test from 'ava';
import { amount, nodeAllocatable, podRequests, resourceList } from '../../../../apiserver/scheduler/resources';
import { node, pod } from './objects';

const amounts: Array<[string, string | number, number]> = [
  ['cpu', '1', 1000],
  ['cpu', '250m', 250],
  ['cpu', '0.5', 500],
  ['cpu', '1.0001', 1001], // rounded up to a whole millicore, as MilliValue
  ['cpu', 2, 2000],
  ['memory', '1Gi', 1073741824],
  ['memory', '128Mi', 134217728],
  ['memory', '1G', 1e9],
  ['memory', '1500m', 2], // rounded up to a whole byte, as Value
  ['pods', '110', 110],
  ['vendor.example/gpu', '2', 2],
  ['memory', 'garbage', 0],
];
for (const [r, q, want] of amounts) {
  test(`amount(${r}, ${JSON.stringify(q)}) = ${want}`, (t) => {
    t.is(amount(r, q), want);
  });
}

test('resourceList converts a quantity map per resource', (t) => {
  t.deepEqual(resourceList({ cpu: '100m', memory: '1Ki', 'vendor.example/gpu': '1' }), { cpu: 100, memory: 1024, 'vendor.example/gpu': 1 });
  t.deepEqual(resourceList(undefined), {});
});

test('nodeAllocatable reads status.allocatable, falling back to capacity', (t) => {
  t.deepEqual(nodeAllocatable(node('n', { allocatable: { cpu: '2', pods: '10' } })), { cpu: 2000, pods: 10 });
  const n = node('n');
  n.status = { capacity: { cpu: '1' } };
  t.deepEqual(nodeAllocatable(n), { cpu: 1000 });
});

const cases: Array<{ name: string; pod: ReturnType<typeof pod>; want: Record<string, number>; nonZero?: Record<string, number> }> = [
  {
    name: 'sum of app containers',
    pod: (() => {
      const p = pod('p', { requests: { cpu: '100m', memory: '64Mi' } });
      (p.spec as { containers: unknown[] }).containers.push({ name: 'd', image: 'x', resources: { requests: { cpu: '200m', 'vendor.example/gpu': '1' } } });
      return p;
    })(),
    want: { cpu: 300, memory: 64 * 1024 * 1024, 'vendor.example/gpu': 1 },
  },
  {
    name: 'an init container bigger than the app containers sets the request',
    pod: pod('p', { requests: { cpu: '100m' }, init: [{ requests: { cpu: '500m' } }, { requests: { cpu: '300m', memory: '1Gi' } }] }),
    want: { cpu: 500, memory: 1073741824 },
  },
  {
    name: 'init containers smaller than the app containers change nothing',
    pod: pod('p', { requests: { cpu: '1' }, init: [{ requests: { cpu: '500m' } }] }),
    want: { cpu: 1000 },
  },
  {
    name: 'sidecars (restartPolicy Always) add to the app containers and to later init containers',
    pod: pod('p', { requests: { cpu: '100m' }, init: [{ requests: { cpu: '200m' }, restartPolicy: 'Always' }, { requests: { cpu: '250m' } }] }),
    // app phase: 100 + 200 = 300; init phase: 250 + 200 = 450
    want: { cpu: 450 },
  },
  {
    name: 'overhead is added',
    pod: pod('p', { requests: { cpu: '100m' }, spec: { overhead: { cpu: '50m', memory: '10Mi' } } }),
    want: { cpu: 150, memory: 10 * 1024 * 1024 },
  },
  {
    name: 'pod-level requests replace cpu and memory',
    pod: pod('p', { requests: { cpu: '100m', 'vendor.example/gpu': '1' }, spec: { resources: { requests: { cpu: '2' } } } }),
    want: { cpu: 2000, 'vendor.example/gpu': 1 },
  },
  {
    name: 'no requests at all: empty, and the scoring defaults when non-zero',
    pod: pod('p'),
    want: {},
    nonZero: { cpu: 100, memory: 200 * 1024 * 1024 },
  },
];
for (const c of cases) {
  test(`podRequests: ${c.name}`, (t) => {
    t.deepEqual(podRequests(c.pod), c.want);
    if (c.nonZero) t.deepEqual(podRequests(c.pod, true), c.nonZero);
  });
}
