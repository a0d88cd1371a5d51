import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeLimitRangeType } from '../../../../../apiserver/registry/types/limitranges';
import { makeResourceQuotaType } from '../../../../../apiserver/registry/types/resourcequotas';
import { ago, cells, now } from './fixtures';

const rq = makeResourceQuotaType(now);
const lr = makeLimitRangeType();
const msgs = (causes: ReadonlyArray<{ field?: string; message: string }>) => causes.map((c) => `${c.field ?? ''}: ${c.message}`);

test('resourcequota: standard names, count/ and extended names pass; unknown, negative and fractional counts fail', (t) => {
  const ok: KObject = { metadata: { name: 'q' }, spec: { hard: { pods: '10', 'requests.cpu': '1.5', 'count/deployments.apps': '2', 'requests.example.com/gpu': '4', 'hugepages-2Mi': '1Gi' } } };
  t.deepEqual(rq.validate!(ok), []);
  const bad: KObject = { metadata: { name: 'q' }, spec: { hard: { widgets: '1', pods: '1.5', memory: '-1' } } };
  t.deepEqual(msgs(rq.validate!(bad)), [
    'spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota',
    'spec.hard[pods]: Invalid value: "1500m": must be an integer',
    'spec.hard[memory]: Invalid value: "-1": must be greater than or equal to 0',
  ]);
});

test('resourcequota: scopes must suit the resources, not conflict, and selectors use operators as upstream', (t) => {
  const q = (spec: Record<string, unknown>): KObject => ({ metadata: { name: 'q' }, spec: { hard: { cpu: '1' }, ...spec } });
  t.deepEqual(rq.validate!(q({ scopes: ['NotBestEffort', 'Terminating'] })), []);
  t.deepEqual(msgs(rq.validate!(q({ scopes: ['BestEffort'] }))), ['spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource']);
  t.deepEqual(msgs(rq.validate!({ metadata: { name: 'q' }, spec: { hard: { pods: '1' }, scopes: ['Terminating', 'NotTerminating'] } })), ['spec.scopes: Invalid value: ["Terminating","NotTerminating"]: conflicting scopes']);
  const sel = (e: Record<string, unknown>) => q({ scopeSelector: { matchExpressions: [e] } });
  t.deepEqual(rq.validate!(sel({ scopeName: 'PriorityClass', operator: 'In', values: ['high'] })), []);
  t.deepEqual(msgs(rq.validate!(sel({ scopeName: 'PriorityClass', operator: 'In' }))), ["spec.scopeSelector.matchExpressions[0].values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"]);
  t.regex(msgs(rq.validate!(sel({ scopeName: 'Terminating', operator: 'In', values: ['x'] })))[0], /must be 'Exist' when scope is any of/);
});

test('resourcequota: the table shows used/hard, limits.* apart', (t) => {
  const o: KObject = { metadata: { name: 'q', creationTimestamp: ago(60_000) }, status: { hard: { pods: '2', 'limits.cpu': '2', 'requests.cpu': '1' }, used: { pods: '1', 'limits.cpu': '500m' } } };
  t.deepEqual(cells(rq, o), { Age: '60s', Request: 'pods: 1/2, requests.cpu: 0/1', Limit: 'limits.cpu: 500m/2' });
});

test('limitrange: Container defaults (limit from max, request from limit or min); upstream\'s cross-checks', (t) => {
  const o: KObject = { metadata: { name: 'l' }, spec: { limits: [{ type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' } }, { type: 'Pod', max: { cpu: '4' } }] } };
  lr.defaults!(o);
  t.deepEqual((o.spec as any).limits[0], { type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' }, default: { cpu: '2' }, defaultRequest: { cpu: '2', memory: '64Mi' } });
  t.deepEqual((o.spec as any).limits[1], { type: 'Pod', max: { cpu: '4' } });
  t.deepEqual(lr.validate!(o), []);
  const bad: KObject = {
    metadata: { name: 'l' },
    spec: {
      limits: [
        { type: 'Container', min: { cpu: '2' }, max: { cpu: '1' }, maxLimitRequestRatio: { memory: '0.5' } },
        { type: 'Pod', default: { cpu: '1' } },
        { type: 'PersistentVolumeClaim' },
        { type: 'Pod' },
        { type: 'Sandbox' },
      ],
    },
  };
  t.deepEqual(msgs(lr.validate!(bad)), [
    'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1',
    'spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: "500m": ratio 500m is less than 1',
    "spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod'",
    'spec.limits[2].limits: Required value: either minimum or maximum storage value is required, but neither was provided',
    'spec.limits[3].type: Duplicate value: "Pod"',
    'spec.limits[4].type: Invalid value: "Sandbox": must be a standard limit type or fully qualified',
  ]);
});
