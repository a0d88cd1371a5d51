import test from 'ava';
import * as fc from 'fast-check';
import type { KObject } from '../../../../../apiserver/api/types';
import { checkQuotas } from '../../../../../apiserver/admission/quota-check';
import { builtinTypes } from '../../../../../apiserver/registry/builtin';
import { evaluatorFor, quotaMatches } from '../../../../../apiserver/registry/quota/evaluators';
import { isBestEffort, podUsage } from '../../../../../apiserver/registry/quota/pod-usage';
import { add, exceeding, formatResourceList, parseResourceList, prettyPrint, subtract, subtractNonNegative } from '../../../../../apiserver/registry/quota/resource-list';

const type = (group: string, resource: string) => builtinTypes.find((t) => t.group === group && t.resource === resource)!;
const pods = type('', 'pods');
const NOW = Date.parse('2025-03-01T12:00:00Z');

test('resource lists add and subtract exactly and render canonically', (t) => {
  const a = parseResourceList({ cpu: '100m', memory: '1Gi', pods: 2 });
  const b = parseResourceList({ cpu: '0.2', memory: '512Mi', 'count/pods': '1' });
  t.deepEqual(formatResourceList(add(a, b)), { 'count/pods': '1', cpu: '300m', memory: '1536Mi', pods: '2' });
  t.deepEqual(formatResourceList(subtract(a, b)), { 'count/pods': '-1', cpu: '-100m', memory: '512Mi', pods: '2' });
  t.deepEqual(formatResourceList(subtractNonNegative(a, b)), { 'count/pods': '0', cpu: '0', memory: '512Mi', pods: '2' });
  t.deepEqual(exceeding(parseResourceList({ cpu: '1001m', pods: '3', other: '9' }), parseResourceList({ cpu: '1', pods: '3' })), ['cpu']);
  t.is(prettyPrint(parseResourceList({ pods: '1', 'limits.cpu': '500m' })), 'limits.cpu=500m,pods=1');
});

test('property: a + b - b = a, in any units', (t) => {
  const q = fc.tuple(fc.integer({ min: 0, max: 10 ** 9 }), fc.constantFrom('m', '', 'k', 'Mi', 'Gi')).map(([n, s]) => `${n}${s}`);
  t.notThrows(() =>
    fc.assert(
      fc.property(q, q, (x, y) => {
        const a = parseResourceList({ r: x });
        const b = parseResourceList({ r: y });
        return prettyPrint(subtract(add(a, b), b)) === prettyPrint(a);
      }),
    ),
  );
});

const pod = (spec: Record<string, unknown>, status: Record<string, unknown> = {}): KObject => ({ metadata: { name: 'p', namespace: 'ns' }, spec, status });
const c = (name: string, resources?: unknown) => ({ name, image: 'x', ...(resources ? { resources } : {}) });

test('pod usage: containers summed, the init phase when larger, overhead, extended resources as requests.*, nothing but count/pods once terminal', (t) => {
  const p = pod({
    containers: [c('a', { requests: { cpu: '100m', memory: '64Mi', 'example.com/gpu': '1' }, limits: { cpu: '200m' } }), c('b', { requests: { cpu: '100m' }, limits: { cpu: '300m' } })],
    initContainers: [c('init', { requests: { cpu: '1' } })],
    overhead: { cpu: '10m' },
  });
  t.deepEqual(formatResourceList(podUsage(p, NOW)), {
    'count/pods': '1',
    cpu: '1010m',
    'limits.cpu': '510m',
    memory: '64Mi',
    pods: '1',
    'requests.cpu': '1010m',
    'requests.example.com/gpu': '1',
    'requests.memory': '64Mi',
  });
  t.deepEqual(formatResourceList(podUsage(pod(p.spec as Record<string, unknown>, { phase: 'Succeeded' }), NOW)), { 'count/pods': '1' });
  t.true(isBestEffort(pod({ containers: [c('a'), c('b', { requests: { 'example.com/gpu': '1' } })] })));
  t.false(isBestEffort(pod({ containers: [c('a', { limits: { memory: '1Mi' } })] })));
});

const quota = (hard: Record<string, string>, spec: Record<string, unknown> = {}, used?: Record<string, string>): KObject => ({
  metadata: { name: 'q', namespace: 'ns' },
  spec: { hard, ...spec },
  status: { hard, used: used ?? Object.fromEntries(Object.keys(hard).map((k) => [k, '0'])) },
});

test('scopes: a quota counts only the pods in every one of its scopes', (t) => {
  const ev = evaluatorFor(pods);
  const terminating = pod({ activeDeadlineSeconds: 30, containers: [c('a')], priorityClassName: 'high' });
  const plain = pod({ containers: [c('a', { requests: { cpu: '1' } })] });
  const q = (spec: Record<string, unknown>) => quota({ pods: '5' }, spec);
  t.true(quotaMatches(q({ scopes: ['Terminating', 'BestEffort'] }), ev, terminating));
  t.false(quotaMatches(q({ scopes: ['Terminating'] }), ev, plain));
  t.true(quotaMatches(q({ scopes: ['NotTerminating', 'NotBestEffort'] }), ev, plain));
  const byClass = (operator: string, values?: string[]) => q({ scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator, ...(values ? { values } : {}) }] } });
  t.true(quotaMatches(byClass('In', ['high']), ev, terminating));
  t.false(quotaMatches(byClass('In', ['high']), ev, plain));
  t.true(quotaMatches(byClass('NotIn', ['high']), ev, plain));
  t.true(quotaMatches(byClass('Exists'), ev, terminating));
  t.true(quotaMatches(byClass('DoesNotExist'), ev, plain));
  // A quota on nothing pods count does not match them; nor one whose status the controller has not filled.
  t.false(quotaMatches(quota({ secrets: '5' }), ev, plain));
  t.false(quotaMatches({ metadata: { name: 'q' }, spec: { hard: { pods: '1' } } }, ev, plain));
});

test('object counts: count/<resource>.<group> in either group spelling, and the legacy names', (t) => {
  t.deepEqual(evaluatorFor(type('', 'configmaps')).matchingResources(['configmaps', 'count/configmaps', 'pods']), ['configmaps', 'count/configmaps']);
  const roles = evaluatorFor(type('rbac.authorization.svc.io', 'roles'));
  t.deepEqual(roles.matchingResources(['count/roles.rbac.authorization.k8s.io', 'count/roles.rbac.authorization.svc.io', 'roles']), ['count/roles.rbac.authorization.k8s.io', 'count/roles.rbac.authorization.svc.io']);
  const svc = evaluatorFor(type('', 'services'));
  const lb = { metadata: { name: 's' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }, { port: 443 }] } };
  t.deepEqual(formatResourceList(svc.usage(lb, NOW)), { 'count/services': '1', services: '1', 'services.loadbalancers': '1', 'services.nodeports': '2' });
  t.true(svc.handles('UPDATE', ''));
  t.false(evaluatorFor(type('', 'secrets')).handles('UPDATE', ''));
  const claim = evaluatorFor(type('', 'persistentvolumeclaims'));
  const pvc = { metadata: { name: 'c' }, spec: { storageClassName: 'fast', resources: { requests: { storage: '2Gi' } } } };
  t.like(formatResourceList(claim.usage(pvc, NOW)), { 'requests.storage': '2Gi', 'fast.storageclass.storage.k8s.io/requests.storage': '2Gi', 'fast.storageclass.storage.k8s.io/persistentvolumeclaims': '1' });
});

test('checkQuotas: charges every matching quota, refuses with upstream\'s messages', (t) => {
  const ev = evaluatorFor(pods);
  const p = pod({ containers: [c('app', { requests: { cpu: '500m' }, limits: { cpu: '1' } })] });
  const ok = checkQuotas([quota({ pods: '2', 'requests.cpu': '1' }, {}, { pods: '1', 'requests.cpu': '0' }), quota({ secrets: '1' })], ev, { operation: 'CREATE', object: p }, NOW);
  t.true('charges' in ok);
  if ('charges' in ok) {
    t.is(ok.charges.length, 1);
    t.deepEqual(formatResourceList(ok.charges[0].used), { pods: '2', 'requests.cpu': '500m' });
    t.deepEqual(formatResourceList(ok.charges[0].delta), { pods: '1', 'requests.cpu': '500m' });
  }
  const full = checkQuotas([quota({ pods: '2' }, {}, { pods: '2' })], ev, { operation: 'CREATE', object: p }, NOW);
  t.deepEqual(full, { refused: 'exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2' });
  const required = checkQuotas([quota({ 'limits.memory': '1Gi', 'requests.cpu': '1' })], ev, { operation: 'CREATE', object: pod({ containers: [c('a'), c('b', { limits: { memory: '1Mi' } })] }) }, NOW);
  t.deepEqual(required, { refused: 'failed quota: q: must specify limits.memory for: a; requests.cpu for: a,b' });
  const unknown = checkQuotas([{ ...quota({ pods: '2', 'requests.cpu': '1' }), status: { hard: { pods: '2', 'requests.cpu': '1' }, used: { pods: '0' } } }], ev, { operation: 'CREATE', object: p }, NOW);
  t.deepEqual(unknown, { refused: 'status unknown for quota: q, resources: pods,requests.cpu' });
  // An update is charged only what it adds.
  const svc = evaluatorFor(type('', 'services'));
  const old = { metadata: { name: 's', resourceVersion: '5' }, spec: { type: 'ClusterIP', ports: [{ port: 80 }] } };
  const lb = { metadata: { name: 's' }, spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } };
  const upd = checkQuotas([quota({ services: '1', 'services.loadbalancers': '1' }, {}, { services: '1', 'services.loadbalancers': '0' })], svc, { operation: 'UPDATE', object: lb, oldObject: old }, NOW);
  t.true('charges' in upd && formatResourceList(upd.charges[0].delta)['services.loadbalancers'] === '1' && upd.charges[0].delta.services === undefined);
});
