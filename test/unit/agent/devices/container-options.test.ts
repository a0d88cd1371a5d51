import test from 'ava';
import { allocationFromWire, mergeAllocations } from '../../../../agent/devices/container-allocation';
import type { ContainerConfig } from '../../../../agent/cri/types';
import { applyDeviceAllocation } from '../../../../agent/pod/container-config';

const a = allocationFromWire({
  envs: { GPU: '0,1', SHARED: 'from-gpu' },
  mounts: [{ container_path: '/usr/lib/gpu', host_path: '/opt/gpu/lib', read_only: true }],
  devices: [{ container_path: '/dev/gpu0', host_path: '/dev/gpu0', permissions: '' }],
  annotations: { 'example.com/gpu': '0,1' },
  cdi_devices: [{ name: 'example.com/gpu=0' }, { name: '' }],
});
const b = allocationFromWire({
  envs: { FPGA: 'x', SHARED: 'from-fpga' },
  mounts: [{ container_path: '/usr/lib/gpu', host_path: '/elsewhere', read_only: false }],
  devices: [{ container_path: '/dev/fpga', host_path: '/dev/fpga0', permissions: 'r' }],
  annotations: {},
  cdi_devices: [{ name: 'example.com/gpu=0' }],
});

test('wire answers convert (empty permissions default to rwm, empty CDI names dropped) and merge across resources', (t) => {
  t.deepEqual(a.devices, [{ containerPath: '/dev/gpu0', hostPath: '/dev/gpu0', permissions: 'rwm' }]);
  t.deepEqual(a.cdiDevices, ['example.com/gpu=0']);
  const { merged, conflicts } = mergeAllocations([a, b]);
  t.deepEqual(merged.envs, { GPU: '0,1', SHARED: 'from-fpga', FPGA: 'x' });
  t.deepEqual(conflicts, ['env SHARED']);
  t.deepEqual(merged.mounts, [{ containerPath: '/usr/lib/gpu', hostPath: '/opt/gpu/lib', readOnly: true }]);
  t.deepEqual(merged.devices.map((d) => d.containerPath), ['/dev/gpu0', '/dev/fpga']);
  t.deepEqual(merged.cdiDevices, ['example.com/gpu=0']);
});

test('applyDeviceAllocation adds envs (device values win), new mounts, devices, annotations and CDI devices to the CRI config', (t) => {
  const config: ContainerConfig = {
    metadata: { name: 'app', attempt: 0 },
    image: { image: 'busybox' },
    envs: [{ key: 'GPU', value: 'user' }, { key: 'PATH', value: '/bin' }],
    mounts: [{ containerPath: '/usr/lib/gpu', hostPath: '/user/volume', readonly: false }],
    annotations: { 'io.kubernetes.container.hash': 'h' },
  };
  applyDeviceAllocation(config, a);
  t.deepEqual(config.envs, [{ key: 'PATH', value: '/bin' }, { key: 'GPU', value: '0,1' }, { key: 'SHARED', value: 'from-gpu' }]);
  t.deepEqual(config.mounts, [{ containerPath: '/usr/lib/gpu', hostPath: '/user/volume', readonly: false }], 'the pod volume keeps its mount point');
  t.deepEqual(config.devices, [{ containerPath: '/dev/gpu0', hostPath: '/dev/gpu0', permissions: 'rwm' }]);
  t.deepEqual(config.annotations, { 'io.kubernetes.container.hash': 'h', 'example.com/gpu': '0,1' });
  t.deepEqual(config.cdiDevices, ['example.com/gpu=0']);
});
