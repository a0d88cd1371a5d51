import test from 'ava';
import { formatBytes, formatCpu, nodeAllocatable, nodeCapacity } from '../../../../agent/node/node-resources';

const machine = { cpuCores: 4, memoryBytes: 8 * 2 ** 30, ephemeralStorageBytes: 100 * 2 ** 30 };

test('capacity reports cores, Ki memory and storage, and maxPods', (t) => {
  t.deepEqual(nodeCapacity({ machine, maxPods: 110 }), { cpu: '4', 'ephemeral-storage': '104857600Ki', memory: '8388608Ki', pods: '110' });
});

test('allocatable subtracts reserved resources and hard eviction thresholds', (t) => {
  const a = nodeAllocatable({
    machine,
    maxPods: 50,
    systemReserved: { cpu: '500m', memory: '1Gi' },
    kubeReserved: { cpu: '250m', memory: '512Mi', 'ephemeral-storage': '1Gi' },
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%' },
  });
  t.is(a.cpu, '3250m');
  t.is(a.memory, `${(8 * 2 ** 30 - 2 ** 30 - 512 * 2 ** 20 - 100 * 2 ** 20) / 1024}Ki`);
  t.is(a['ephemeral-storage'], formatBytes(100 * 2 ** 30 - 2 ** 30 - 0.1 * 100 * 2 ** 30));
  t.is(a.pods, '50');
});

test('quantities never go negative and odd byte counts stay exact', (t) => {
  t.is(formatCpu(-1), '0');
  t.is(formatCpu(2), '2');
  t.is(formatCpu(1.5), '1500m');
  t.is(formatBytes(1000), '1000');
  t.is(formatBytes(2048), '2Ki');
  t.is(nodeAllocatable({ machine: { ...machine, memoryBytes: 2 ** 20 }, maxPods: 1, systemReserved: { memory: '1Gi' } }).memory, '0');
});
