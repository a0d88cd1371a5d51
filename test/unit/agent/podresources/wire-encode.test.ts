/**
 * The hand-written encoder against proto-loader on the real proto file: our bytes decode (with
 * proto-loader) to exactly what proto-loader's own encoding decodes to, for answers using every
 * field we write. Bytes differ only where protobufjs writes a field set to its default value
 * (proto3 readers treat both alike), so ours are never longer.
 */
import test from 'ava';
import { loadPodResourcesProto } from '../../../../agent/podresources/podresources-proto';
import { encodeAllocatableResponse, encodeGetResponse, encodeListResponse } from '../../../../agent/podresources/wire-encode';
import type { AllocatableResourcesResponse, ContainerResources, GetPodResourcesResponse, ListPodResourcesResponse } from '../../../../agent/podresources/wire-types';

const def = loadPodResourcesProto().service as unknown as Record<string, { responseSerialize(x: object): Buffer; responseDeserialize(b: Buffer): object }>;

const rich: ContainerResources = {
  name: 'gpü-container',
  devices: [
    { resource_name: 'example.com/foo', device_ids: ['d1', 'd2', 'ünïcode-☃'], topology: { nodes: [{ ID: 0 }, { ID: 1 }, { ID: '300' }] } },
    { resource_name: 'example.com/bar', device_ids: [''], topology: null },
    { resource_name: 'example.com/empty', device_ids: [], topology: { nodes: [] } },
  ],
  cpu_ids: [0, 3, 127, 128, '70000', -1],
  memory: [
    { memory_type: 'memory', size: '1073741824', topology: { nodes: [{ ID: 0 }] } },
    { memory_type: 'hugepages-2Mi', size: 0, topology: null },
    { memory_type: '', size: '18446744073709551615' },
  ],
  dynamic_resources: [],
};

const list: ListPodResourcesResponse = {
  pod_resources: [
    { name: 'a', namespace: 'default', containers: [rich, { name: 'plain', devices: [], cpu_ids: [], memory: [], dynamic_resources: [] }] },
    { name: '', namespace: '', containers: [] },
    { name: 'x'.repeat(300), namespace: 'long', containers: [] },
  ],
};

function same(t: { deepEqual(a: unknown, b: unknown): void; true(x: boolean): void }, method: string, msg: object, ours: Buffer): void {
  const theirs = def[method]!.responseSerialize(msg);
  t.deepEqual(def[method]!.responseDeserialize(ours), def[method]!.responseDeserialize(theirs));
  t.true(ours.length <= theirs.length);
}

test('List decodes to what proto-loader\'s own encoding decodes to', (t) => {
  const ours = encodeListResponse(list);
  same(t, 'List', list, ours);
  const decoded = def['List']!.responseDeserialize(ours) as any;
  t.deepEqual(decoded.pod_resources[0].containers[0].devices[0].device_ids, ['d1', 'd2', 'ünïcode-☃']);
  t.deepEqual(decoded.pod_resources[0].containers[0].cpu_ids, ['0', '3', '127', '128', '70000', '-1']);
  t.is(decoded.pod_resources[0].containers[0].memory[2].size, '18446744073709551615');
});

test('Get and GetAllocatableResources decode to what proto-loader\'s encoding decodes to', (t) => {
  const get: GetPodResourcesResponse = { pod_resources: list.pod_resources[0]! };
  same(t, 'Get', get, encodeGetResponse(get));
  const empty: GetPodResourcesResponse = { pod_resources: { name: '', namespace: '', containers: [] } };
  same(t, 'Get', empty, encodeGetResponse(empty));
  // A present but empty pod_resources is still written (proto3 sub-message presence).
  t.deepEqual([...encodeGetResponse(empty)], [0x0a, 0x00]);
  const alloc: AllocatableResourcesResponse = { devices: rich.devices, cpu_ids: [1, 2], memory: rich.memory };
  same(t, 'GetAllocatableResources', alloc, encodeAllocatableResponse(alloc));
  const none: AllocatableResourcesResponse = { devices: [], cpu_ids: [], memory: [] };
  t.is(encodeAllocatableResponse(none).length, 0);
});

test('dynamic resources are refused rather than silently dropped', (t) => {
  const bad = { pod_resources: [{ name: 'a', namespace: 'b', containers: [{ ...rich, dynamic_resources: [{}] }] }] };
  t.throws(() => encodeListResponse(bad), { message: /dynamic_resources/ });
});
