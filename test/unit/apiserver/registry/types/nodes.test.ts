import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeNodeType } from '../../../../../apiserver/registry/types/nodes';
import { ago, cells, fields, now } from './fixtures';

const nodeType = makeNodeType(now);

function node(): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'worker-1', creationTimestamp: ago(2 * 86400_000 + 5 * 3600_000), labels: { 'node-role.svc.io/worker': '', 'node-role.svc.io/edge': '' } },
    spec: { podCIDR: '10.244.1.0/24' },
    status: {
      capacity: { cpu: '4', memory: '8388608Ki', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
      addresses: [
        { type: 'InternalIP', address: '192.168.1.10' },
        { type: 'Hostname', address: 'worker-1' },
      ],
      nodeInfo: { kubeletVersion: 'v1.34.0', osImage: 'Debian GNU/Linux 12', kernelVersion: '6.1.0', containerRuntimeVersion: 'containerd://2.0.0' },
    },
  };
}

test('defaults: allocatable from capacity, podCIDRs from podCIDR, canonical quantities', (t) => {
  const o = node();
  nodeType.defaults!(o);
  t.deepEqual((o.status as any).capacity, { cpu: '4', memory: '8Gi', pods: '110' });
  t.deepEqual((o.status as any).allocatable, { cpu: '4', memory: '8Gi', pods: '110' });
  t.deepEqual((o.spec as any).podCIDRs, ['10.244.1.0/24']);
  const again = structuredClone(o);
  nodeType.defaults!(again);
  t.deepEqual(again, o);
});

test('defaults: nodeInfo carries every string field of upstream, empty when unset (the Python client requires kubeProxyVersion)', (t) => {
  const o = node();
  nodeType.defaults!(o);
  t.deepEqual((o.status as any).nodeInfo, {
    kubeletVersion: 'v1.34.0',
    osImage: 'Debian GNU/Linux 12',
    kernelVersion: '6.1.0',
    containerRuntimeVersion: 'containerd://2.0.0',
    machineID: '',
    systemUUID: '',
    bootID: '',
    kubeProxyVersion: '',
    operatingSystem: '',
    architecture: '',
  });
  // A node without a nodeInfo gets none.
  const bare = node();
  delete (bare.status as any).nodeInfo;
  nodeType.defaults!(bare);
  t.is((bare.status as any).nodeInfo, undefined);
});

test('a valid node passes; node keeps its status on create', (t) => {
  const o = node();
  nodeType.defaults!(o);
  t.deepEqual(nodeType.validate!(o), []);
  t.true(nodeType.keepStatusOnCreate);
  t.true(nodeType.hasStatus);
  t.false(nodeType.namespaced);
});

test('taints: effect enum, unique key/effect, qualified keys', (t) => {
  const o = node();
  (o.spec as any).taints = [
    { key: 'a', effect: 'NoSchedule' },
    { key: 'a', effect: 'NoSchedule' },
    { key: 'b', effect: 'Sometimes' },
    { key: 'bad key', value: 'x', effect: 'NoExecute' },
  ];
  const causes = nodeType.validate!(o);
  t.deepEqual(fields(causes), ['spec.taints[1]', 'spec.taints[2].effect', 'spec.taints[3].key']);
  t.true(causes[0].message.endsWith(': taints must be unique by key and effect pair'));
  t.is(causes[1].message, 'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"');
});

test('podCIDRs must be CIDRs, one per family', (t) => {
  const o = node();
  (o.spec as any).podCIDRs = ['10.0.0.0/33', '10.1.0.0/16', '10.2.0.0/16'];
  t.deepEqual(fields(nodeType.validate!(o)), ['spec.podCIDRs[0]', 'spec.podCIDRs']);
});

test('negative capacity is invalid', (t) => {
  const o = node();
  (o.status as any).capacity = { cpu: '-1' };
  t.deepEqual(nodeType.validate!(o).map((c) => [c.field, c.message]), [['status.capacity[cpu]', 'Invalid value: "-1": must be greater than or equal to 0']]);
});

test('update: podCIDR and providerID may only be set once', (t) => {
  const old = node();
  nodeType.defaults!(old);
  const unset = structuredClone(old);
  delete (unset.spec as any).podCIDR;
  delete (unset.spec as any).podCIDRs;
  t.deepEqual(nodeType.validateUpdate!(old, unset), []);
  const changed = structuredClone(old);
  (changed.spec as any).podCIDRs = ['10.9.0.0/24'];
  (changed.spec as any).unschedulable = true;
  t.deepEqual(nodeType.validateUpdate!(changed, old).map((c) => [c.field, c.message]), [
    ['spec.podCIDRs', 'Forbidden: node updates may not change podCIDR except from "" to valid'],
  ]);
  const withProvider = structuredClone(old);
  (withProvider.spec as any).providerID = 'p1';
  const otherProvider = structuredClone(old);
  (otherProvider.spec as any).providerID = 'p2';
  t.deepEqual(fields(nodeType.validateUpdate!(otherProvider, withProvider)), ['spec.providerID']);
});

test('table cells as kubectl get nodes -o wide', (t) => {
  t.deepEqual(nodeType.tableColumns!.map((c) => c.name), [
    'Status',
    'Roles',
    'Age',
    'Version',
    'Internal-IP',
    'External-IP',
    'OS-Image',
    'Kernel-Version',
    'Container-Runtime',
  ]);
  t.deepEqual(cells(nodeType, node()), {
    Status: 'Ready',
    Roles: 'edge,worker',
    Age: '2d5h',
    Version: 'v1.34.0',
    'Internal-IP': '192.168.1.10',
    'External-IP': '<none>',
    'OS-Image': 'Debian GNU/Linux 12',
    'Kernel-Version': '6.1.0',
    'Container-Runtime': 'containerd://2.0.0',
  });
});

test('status cell: NotReady, Unknown, SchedulingDisabled; roles <none>', (t) => {
  const o = node();
  (o.status as any).conditions = [{ type: 'Ready', status: 'Unknown' }];
  (o.spec as any).unschedulable = true;
  o.metadata.labels = { 'svc.io/role': 'gateway' };
  const c = cells(nodeType, o);
  t.is(c.Status, 'NotReady,SchedulingDisabled');
  t.is(c.Roles, 'gateway');
  (o.status as any).conditions = [];
  o.metadata.labels = {};
  t.is(cells(nodeType, o).Status, 'Unknown,SchedulingDisabled');
  t.is(cells(nodeType, o).Roles, '<none>');
  delete (o.status as any).nodeInfo;
  t.is(cells(nodeType, o)['OS-Image'], '<unknown>');
});

test('field selector spec.unschedulable', (t) => {
  const o = node();
  t.is(nodeType.fieldSelectors!['spec.unschedulable'](o), 'false');
  (o.spec as any).unschedulable = true;
  t.is(nodeType.fieldSelectors!['spec.unschedulable'](o), 'true');
});

test('schema: addresses and conditions keyed by type, taints atomic, nodeInfo present', (t) => {
  const status = (nodeType.schema.properties.status as any).properties;
  t.deepEqual(status.addresses.mapKeys, ['type']);
  t.deepEqual(status.conditions.mapKeys, ['type']);
  t.truthy(status.nodeInfo.properties.kubeletVersion);
  t.truthy(status.declaredFeatures);
  t.is((nodeType.schema.properties.spec as any).properties.taints.listType, 'atomic');
});
