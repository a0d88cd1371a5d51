import test from 'ava';
import { PodNotFoundError, PodResourcesService } from '../../../../agent/podresources/pod-resources-service';
import { noDevices } from '../../../../agent/podresources/provider';
import { FakeDevices, FakePods } from '../../../helpers/device-doubles';

function node() {
  const pods = new FakePods();
  const devices = new FakeDevices();
  pods.add({ namespace: 'default', name: 'gpu', uid: 'u1', containers: ['side', 'main'] });
  pods.add({ namespace: 'ml', name: 'plain', uid: 'u2', containers: ['c'] });
  pods.add({ namespace: 'default', name: 'leaving', uid: 'u3', containers: ['c'] }, false);
  devices.assign('u1', 'main', [
    { resourceName: 'example.com/foo', deviceIds: ['d1', 'd2'], topology: { nodes: [{ ID: 0 }] } },
    { resourceName: 'example.com/bar', deviceIds: ['b7'] },
  ]);
  devices.assign('u3', 'c', [{ resourceName: 'example.com/foo', deviceIds: ['d3'] }]);
  devices.setAllocatable([
    { resourceName: 'example.com/foo', deviceIds: ['d1'], topology: { nodes: [{ ID: 0 }] } },
    { resourceName: 'example.com/foo', deviceIds: ['d2'], topology: { nodes: [{ ID: 0 }] } },
    { resourceName: 'example.com/foo', deviceIds: ['d3'], topology: { nodes: [{ ID: 1 }] } },
    { resourceName: 'example.com/bar', deviceIds: ['b7'] },
  ]);
  return { svc: new PodResourcesService(pods, devices), devices };
}

test('List shows every active pod with each container\'s devices; CPUs, memory and dynamic resources empty', (t) => {
  const { svc } = node();
  const r = svc.list();
  t.deepEqual(r, {
    pod_resources: [
      {
        name: 'gpu',
        namespace: 'default',
        containers: [
          { name: 'side', devices: [], cpu_ids: [], memory: [], dynamic_resources: [] },
          {
            name: 'main',
            devices: [
              { resource_name: 'example.com/foo', device_ids: ['d1', 'd2'], topology: { nodes: [{ ID: 0 }] } },
              { resource_name: 'example.com/bar', device_ids: ['b7'], topology: null },
            ],
            cpu_ids: [],
            memory: [],
            dynamic_resources: [],
          },
        ],
      },
      { name: 'plain', namespace: 'ml', containers: [{ name: 'c', devices: [], cpu_ids: [], memory: [], dynamic_resources: [] }] },
    ],
  });
});

test('Get finds a pod that is not active any more (as upstream GetPodByName) and refuses unknown ones with upstream\'s wording', (t) => {
  const { svc } = node();
  const r = svc.get({ pod_namespace: 'default', pod_name: 'leaving' });
  t.is(r.pod_resources.name, 'leaving');
  t.deepEqual(r.pod_resources.containers[0].devices, [{ resource_name: 'example.com/foo', device_ids: ['d3'], topology: null }]);
  const err = t.throws(() => svc.get({ pod_namespace: 'default', pod_name: 'nope' }), { instanceOf: PodNotFoundError });
  t.is(err?.message, 'pod nope in namespace default not found');
  // Same name in another namespace is another pod.
  t.throws(() => svc.get({ pod_namespace: 'ml', pod_name: 'gpu' }), { instanceOf: PodNotFoundError });
});

test('GetAllocatableResources lists every device with its topology', (t) => {
  const { svc } = node();
  const r = svc.allocatable();
  t.deepEqual(r.cpu_ids, []);
  t.deepEqual(r.memory, []);
  t.deepEqual(
    r.devices.map((d) => [d.resource_name, d.device_ids.join(','), d.topology?.nodes.map((n) => n.ID).join(',') ?? '-']),
    [
      ['example.com/foo', 'd1', '0'],
      ['example.com/foo', 'd2', '0'],
      ['example.com/foo', 'd3', '1'],
      ['example.com/bar', 'b7', '-'],
    ],
  );
});

test('answers copy the provider\'s arrays (a later change by the provider does not alter an answer)', (t) => {
  const pods = new FakePods();
  const devices = new FakeDevices();
  pods.add({ namespace: 'default', name: 'p', uid: 'u', containers: ['c'] });
  const ids = ['x'];
  devices.assign('u', 'c', [{ resourceName: 'example.com/foo', deviceIds: ids }]);
  const r = new PodResourcesService(pods, devices).list();
  ids.push('y');
  t.deepEqual(r.pod_resources[0].containers[0].devices[0].device_ids, ['x']);
});

test('with no devices provider wired every list is empty of devices', (t) => {
  const pods = new FakePods();
  pods.add({ namespace: 'default', name: 'p', uid: 'u', containers: ['c'] });
  const svc = new PodResourcesService(pods, noDevices);
  t.deepEqual(svc.list().pod_resources[0].containers[0].devices, []);
  t.deepEqual(svc.allocatable().devices, []);
});
