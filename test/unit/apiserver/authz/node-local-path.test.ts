import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import type { SelectorAttributes } from '../../../../apiserver/authz/attributes';
import { NodeAuthorizer } from '../../../../apiserver/authz/node-authorizer';
import { NodeGraph } from '../../../../apiserver/authz/node-graph';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { res } from './helpers';

const pvT = { group: '', resource: 'persistentvolumes' } as ResourceType;
const n1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const local = (name: string, node: string): KObject => ({ metadata: { name, labels: { 'local-path.svc.io/node': node } }, spec: {} });

function authorizer(): { z: NodeAuthorizer; g: NodeGraph } {
  const g = new NodeGraph();
  g.upsert(pvT, local('pvc-mine', 'n1'));
  g.upsert(pvT, local('pvc-theirs', 'n2'));
  g.upsert(pvT, { metadata: { name: 'plain' }, spec: {} });
  return { z: new NodeAuthorizer(g), g };
}
const byLabel = (verb: string, value: string): SelectorAttributes => ({ user: n1, info: res(verb, 'persistentvolumes'), labelSelector: [{ key: 'local-path.svc.io/node', operator: 'In', values: [value] }] });

const cases: Array<[string, SelectorAttributes, 'allow' | 'no-opinion']> = [
  ['get of its local-path volume', { user: n1, info: res('get', 'persistentvolumes', { name: 'pvc-mine' }) }, 'allow'],
  ['update of its local-path volume (NodeRestriction limits it)', { user: n1, info: res('update', 'persistentvolumes', { name: 'pvc-mine' }) }, 'allow'],
  ['patch of its local-path volume', { user: n1, info: res('patch', 'persistentvolumes', { name: 'pvc-mine' }) }, 'allow'],
  ["another node's local-path volume", { user: n1, info: res('update', 'persistentvolumes', { name: 'pvc-theirs' }) }, 'no-opinion'],
  ['a volume without the label', { user: n1, info: res('update', 'persistentvolumes', { name: 'plain' }) }, 'no-opinion'],
  ['delete is never allowed', { user: n1, info: res('delete', 'persistentvolumes', { name: 'pvc-mine' }) }, 'no-opinion'],
  ['status update is not allowed', { user: n1, info: res('update', 'persistentvolumes/status', { name: 'pvc-mine' }) }, 'no-opinion'],
  ['list by its own label', byLabel('list', 'n1'), 'allow'],
  ['watch by its own label', byLabel('watch', 'n1'), 'allow'],
  ["list by another node's label", byLabel('list', 'n2'), 'no-opinion'],
  ['list without a selector', { user: n1, info: res('list', 'persistentvolumes') }, 'no-opinion'],
];

for (const [name, attrs, want] of cases) {
  test(`Node, local-path volumes: ${name}`, async (t) => {
    const d = await authorizer().z.authorize(attrs);
    t.is(d.decision, want, d.reason);
  });
}

test('the graph forgets a deleted volume and follows a relabelled one', (t) => {
  const { z, g } = authorizer();
  const get = () => z.decide({ user: n1, info: res('get', 'persistentvolumes', { name: 'pvc-mine' }) }).decision;
  g.remove(pvT, local('pvc-mine', 'n1'));
  t.is(get(), 'no-opinion');
  g.upsert(pvT, local('pvc-mine', 'n1'));
  t.is(get(), 'allow');
  g.upsert(pvT, local('pvc-mine', 'n3'));
  t.is(get(), 'no-opinion');
});
