import test from 'ava';
import { declaredFeatures } from '../../../../agent/node/declared-features';
import { FeatureGates } from '../../../../agent/config/feature-gates';
import { FlagCheck, ReadinessSource } from '../../../../agent/node/readiness';
import { unknownRuntime } from '../../../../agent/node/runtime-status';
import { NodeStatusSource } from '../../../../agent/node/status-source';
import { machine, testStatus } from './fakes/fixtures';

test('computes capacity, info, pressure conditions and Ready', async (t) => {
  const s = testStatus();
  const st = await s.source.compute();
  t.is(st.capacity.pods, '110');
  t.is(st.nodeInfo.containerRuntimeVersion, 'unknown://');
  t.is(st.nodeInfo.kubeletVersion, 'v0.1.0');
  t.is(st.nodeInfo.bootID, 'boot-1');
  t.deepEqual(
    st.conditions.map((c) => [c.type, c.status]),
    [
      ['MemoryPressure', 'False'],
      ['DiskPressure', 'False'],
      ['PIDPressure', 'False'],
      ['Ready', 'True'],
    ],
  );
  t.deepEqual(st.declaredFeatures, ['ContainerCheckpoint']);
});

test('pressure and failing readiness checks show up in the conditions', async (t) => {
  const s = testStatus();
  s.pressure.disk = true;
  s.readiness.add(new FlagCheck('container runtime', 'runtime is down'));
  const st = await s.source.compute();
  const by = Object.fromEntries(st.conditions.map((c) => [c.type, c]));
  t.is(by['DiskPressure'].status, 'True');
  t.is(by['Ready'].status, 'False');
  t.is(by['Ready'].reason, 'KubeletNotReady');
  t.is(by['Ready'].message, 'container runtime: runtime is down');
});

test('unreadable pressure signals give Unknown pressure conditions, not a failure', async (t) => {
  const source = new NodeStatusSource({
    machine,
    addresses: () => [],
    pressure: () => Promise.reject(new Error('cannot read /proc/meminfo')),
    readiness: new ReadinessSource(),
    runtime: unknownRuntime,
    resources: { maxPods: 10 },
    svcVersion: 'v1',
    declaredFeatures: [],
    port: 10250,
  });
  const st = await source.compute();
  t.deepEqual(st.conditions.map((c) => c.status), ['Unknown', 'Unknown', 'Unknown', 'True']);
  t.regex(st.conditions[0].message!, /meminfo/);
});

test('declaredFeatures lists enabled node-level gates only, sorted', (t) => {
  t.deepEqual(declaredFeatures(new FeatureGates()), ['ContainerCheckpoint', 'InPlacePodVerticalScaling', 'NodeSwap', 'SidecarContainers']);
  t.deepEqual(declaredFeatures(new FeatureGates({ NodeSwap: false, ContainerCheckpoint: false })), ['InPlacePodVerticalScaling', 'SidecarContainers']);
});

test('device plugins extended resources are added to capacity and allocatable, read at every computation', async (t) => {
  let ext: { capacity: Record<string, string>; allocatable: Record<string, string> } = { capacity: { 'example.com/foo': '4' }, allocatable: { 'example.com/foo': '3' } };
  const source = new NodeStatusSource({
    machine,
    addresses: () => [],
    pressure: () => Promise.resolve({ memory: false, disk: false, pid: false }),
    readiness: new ReadinessSource(),
    runtime: unknownRuntime,
    resources: { maxPods: 10 },
    svcVersion: 'v1',
    declaredFeatures: [],
    port: 10250,
    extendedResources: () => ext,
  });
  const st = await source.compute();
  t.is(st.capacity['example.com/foo'], '4');
  t.is(st.allocatable['example.com/foo'], '3');
  t.is(st.capacity.pods, '10');
  ext = { capacity: {}, allocatable: {} };
  const after = await source.compute();
  t.false('example.com/foo' in after.capacity);
  t.false('example.com/foo' in after.allocatable);
});
