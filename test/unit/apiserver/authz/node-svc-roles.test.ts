/**
 * A node's identity may read what svc-node's embedded pieces need, and no more: the proxy, cluster DNS
 * and pod-network routes (system:node-proxier, bound to system:nodes as system:svc-node-proxier) and
 * NetworkPolicy enforcement (system:svc-node-network-policy).
 */
import test from 'ava';
import type { SelectorAttributes } from '../../../../apiserver/authz/attributes';
import { openAuthzFixture, type AuthzFixture } from './fixture';
import { eventually, res, user } from './helpers';

let f: AuthzFixture;
test.before(async () => {
  f = await openAuthzFixture();
  await f.ready();
});
test.after.always(async () => {
  await f?.close();
});

const allowed = async (a: SelectorAttributes) => (await f.authz.chain.decide(a)).allowed;
const node = user('system:node:n1', 'system:nodes', 'system:authenticated');
const NET = { apiGroup: 'networking.svc.io' };

test('nodes list and watch network policies, every pod and the namespaces; they may not write policies or read other secrets', async (t) => {
  await eventually(() => allowed({ user: node, info: res('list', 'networkpolicies', NET) }), 'the binding is in effect');
  for (const verb of ['list', 'watch']) {
    t.true(await allowed({ user: node, info: res(verb, 'networkpolicies', NET) }), `${verb} networkpolicies`);
    t.true(await allowed({ user: node, info: res(verb, 'pods') }), `${verb} pods of every node`);
    t.true(await allowed({ user: node, info: res(verb, 'namespaces') }), `${verb} namespaces`);
  }
  t.false(await allowed({ user: node, info: res('create', 'networkpolicies', { ...NET, namespace: 'default' }) }));
  t.false(await allowed({ user: node, info: res('list', 'secrets') }));
  t.false(await allowed({ user: user('someone', 'system:authenticated'), info: res('list', 'networkpolicies', NET) }), 'only nodes');
});

const DISCOVERY = { apiGroup: 'discovery.svc.io' };

test('nodes list and watch Services, EndpointSlices and every Node; they may not write slices', async (t) => {
  await eventually(() => allowed({ user: node, info: res('list', 'endpointslices', DISCOVERY) }), 'the binding is in effect');
  for (const verb of ['list', 'watch']) {
    t.true(await allowed({ user: node, info: res(verb, 'endpointslices', DISCOVERY) }), `${verb} endpointslices`);
    t.true(await allowed({ user: node, info: res(verb, 'services') }), `${verb} services`);
    t.true(await allowed({ user: node, info: res(verb, 'nodes') }), `${verb} every node`);
  }
  t.false(await allowed({ user: node, info: res('create', 'endpointslices', { ...DISCOVERY, namespace: 'default' }) }));
  t.false(await allowed({ user: user('someone', 'system:authenticated'), info: res('list', 'endpointslices', DISCOVERY) }), 'only nodes');
});
