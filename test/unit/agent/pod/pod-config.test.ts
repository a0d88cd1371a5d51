/** The pieces that turn a pod spec into CRI configs: back-off, $(VAR) expansion, resources, sandbox and container configs, atomic volume writes. */
import { lstat, mkdtemp, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { writeAtomically } from '../../../../agent/pod/atomic-writer';
import { buildContainerConfig, DEFAULT_MASKED_PATHS } from '../../../../agent/pod/container-config';
import { expand } from '../../../../agent/pod/env';
import { FlowBackoff, goDuration } from '../../../../agent/pod/flow-backoff';
import type { Pod } from '../../../../agent/api/core-v1';
import { linuxResources, oomScoreAdj, podQos } from '../../../../agent/pod/resources';
import { buildSandboxConfig, podHostname } from '../../../../agent/pod/sandbox-config';
import { FakeClock } from '../../../helpers/fake-clock';

test('flow back-off: 10 s, doubling to 5 min, forgotten after a quiet 10 min; Go duration strings', async (t) => {
  const clock = new FakeClock();
  const b = new FlowBackoff(clock);
  t.false(b.isInBackOffSince('k', clock.now()));
  b.next('k', clock.now());
  t.is(b.get('k'), 10_000);
  t.true(b.isInBackOffSince('k', clock.now()));
  await clock.advance(10_000);
  t.false(b.isInBackOffSince('k', clock.now() - 10_000));
  for (let i = 0; i < 10; i++) b.next('k', clock.now());
  t.is(b.get('k'), 300_000);
  await clock.advance(601_000);
  b.next('k', clock.now());
  t.is(b.get('k'), 10_000, 'reset after twice the cap without failures');
  t.deepEqual([10_000, 20_000, 80_000, 160_000, 300_000].map(goDuration), ['10s', '20s', '1m20s', '2m40s', '5m0s']);
});

test('$(VAR) expansion as upstream: known names replaced, unknown kept, $$ escapes', (t) => {
  const env = new Map([['A', 'x'], ['B', 'y']]);
  const get = (n: string) => env.get(n);
  t.is(expand('$(A)-$(B)', get), 'x-y');
  t.is(expand('$(C) stays', get), '$(C) stays');
  t.is(expand('$$(A) and $$', get), '$(A) and $');
  t.is(expand('$A $(A', get), '$A $(A');
});

const base: Pod = { metadata: { name: 'web', namespace: 'prod', uid: 'u-1', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };

test('QoS, shares, quota and OOM score adjustment follow upstream, never below 0', (t) => {
  const guaranteed: Pod = { ...base, spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { cpu: '2', memory: '1Gi' } } }] } };
  t.is(podQos(guaranteed), 'Guaranteed');
  t.is(oomScoreAdj(guaranteed, guaranteed.spec.containers[0], 8 * 2 ** 30), 0);
  t.is(podQos(base), 'BestEffort');
  t.is(oomScoreAdj(base, base.spec.containers[0], 8 * 2 ** 30), 1000);
  const burst: Pod = { ...base, spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '100m', memory: '4Gi' } } }] } };
  t.is(podQos(burst), 'Burstable');
  t.is(oomScoreAdj(burst, burst.spec.containers[0], 8 * 2 ** 30), 500);
  const r = linuxResources(burst, burst.spec.containers[0], 8 * 2 ** 30);
  t.is(r.cpuShares, 102);
  t.is(r.cpuQuota, undefined);
  t.is(r.memoryLimitInBytes, undefined);
  const tiny = linuxResources(guaranteed, { name: 'c', resources: { limits: { cpu: '1m' } } }, 1);
  t.is(tiny.cpuQuota, 1000, 'at least 1 ms per period');
  t.is(tiny.cpuShares, 2);
});

test('sandbox config: names, log directory, hostname rules, namespaces, DNS with cluster DNS, ports', (t) => {
  const pod: Pod = {
    ...base,
    spec: { shareProcessNamespace: true, containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort: 8080 }] }], securityContext: { sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] } },
  };
  const cfg = buildSandboxConfig({ pod, attempt: 1, podLogsDir: '/var/log/pods', cgroupParent: '/svc-node/podu-1', seccomp: { profileType: 'RuntimeDefault' }, clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local' });
  t.deepEqual(cfg.metadata, { name: 'web', namespace: 'prod', uid: 'u-1', attempt: 1 });
  t.is(cfg.logDirectory, '/var/log/pods/prod_web_u-1');
  t.is(cfg.hostname, 'web');
  t.is(cfg.labels?.['io.kubernetes.pod.uid'], 'u-1');
  t.is(cfg.labels?.['app'], 'web');
  t.deepEqual(cfg.linux?.securityContext?.namespaceOptions, { network: 'POD', pid: 'POD', ipc: 'POD' });
  t.deepEqual(cfg.dnsConfig, { servers: ['10.96.0.10'], searches: ['prod.svc.cluster.local', 'svc.cluster.local', 'cluster.local'], options: ['ndots:5'] });
  t.deepEqual(cfg.portMappings, [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }]);
  t.deepEqual(cfg.linux?.sysctls, { 'net.core.somaxconn': '1024' });
  const host = buildSandboxConfig({ pod: { ...pod, spec: { ...pod.spec, hostNetwork: true } }, attempt: 0, podLogsDir: '/l', cgroupParent: '/p', seccomp: { profileType: 'Unconfined' }, clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local' });
  t.is(host.hostname, undefined, 'no hostname on the host network');
  t.is(host.dnsConfig, undefined, 'ClusterFirst on the host network uses the node resolv.conf');
  t.is(podHostname({ ...base, metadata: { name: 'x'.repeat(62) + '-abc' } }), 'x'.repeat(62));
});

test('container config: expanded command, labels, log path per attempt, security context with masked paths unless privileged', (t) => {
  const pod: Pod = { ...base, spec: { containers: [{ name: 'c', image: 'i', command: ['sh', '-c', 'echo $(MSG)'], securityContext: { runAsUser: 1000, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] } } }] } };
  const cfg = buildContainerConfig({
    pod,
    container: pod.spec.containers[0],
    kind: 'container',
    attempt: 3,
    env: [{ key: 'MSG', value: 'hi' }],
    volumes: new Map(),
    seccomp: { profileType: 'RuntimeDefault' },
    memoryCapacity: 2 ** 33,
  });
  t.deepEqual(cfg.command, ['sh', '-c', 'echo hi']);
  t.is(cfg.logPath, 'c/3.log');
  t.deepEqual(cfg.metadata, { name: 'c', attempt: 3 });
  t.is(cfg.annotations?.['io.kubernetes.container.restartCount'], '3');
  const sc = cfg.linux?.securityContext;
  t.is(sc?.runAsUser, 1000);
  t.true(sc?.readonlyRootfs);
  t.true(sc?.noNewPrivs);
  t.deepEqual(sc?.capabilities, { addCapabilities: ['CAP_NET_ADMIN'], dropCapabilities: ['ALL'] });
  t.deepEqual(sc?.maskedPaths, DEFAULT_MASKED_PATHS);
  t.deepEqual(sc?.namespaceOptions, { network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
  const priv = buildContainerConfig({ pod, container: { name: 'p', image: 'i', securityContext: { privileged: true } }, kind: 'init', attempt: 0, env: [], volumes: new Map(), seccomp: { profileType: 'Unconfined' }, memoryCapacity: 1 });
  t.is(priv.linux?.securityContext?.maskedPaths, undefined);
  t.is(priv.annotations?.['svc.io/container-kind'], 'init');
  t.throws(() => buildContainerConfig({ pod, container: { name: 'm', image: 'i', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }, kind: 'container', attempt: 0, env: [], volumes: new Map(), seccomp: { profileType: 'Unconfined' }, memoryCapacity: 1 }), {
    message: 'cannot find volume "nope" to mount into container "m"',
  });
});

test('atomic writes: files appear through ..data, updates swap all at once, removed keys disappear, unchanged sets are not rewritten', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-atomic-'));
  try {
    t.true(await writeAtomically(dir, [{ path: 'a', data: Buffer.from('1'), mode: 0o644 }, { path: 'sub/b', data: Buffer.from('2'), mode: 0o600 }]));
    t.is(await readFile(path.join(dir, 'a'), 'utf8'), '1');
    t.is(await readFile(path.join(dir, 'sub', 'b'), 'utf8'), '2');
    t.true((await lstat(path.join(dir, 'a'))).isSymbolicLink());
    const first = await readlink(path.join(dir, '..data'));
    t.false(await writeAtomically(dir, [{ path: 'a', data: Buffer.from('1'), mode: 0o644 }, { path: 'sub/b', data: Buffer.from('2'), mode: 0o600 }]));
    t.true(await writeAtomically(dir, [{ path: 'a', data: Buffer.from('changed'), mode: 0o644 }]));
    t.not(await readlink(path.join(dir, '..data')), first);
    t.is(await readFile(path.join(dir, 'a'), 'utf8'), 'changed');
    await t.throwsAsync(lstat(path.join(dir, 'sub')));
    await t.throwsAsync(lstat(path.join(dir, first)), undefined, 'the old data dir is gone');
    await t.throwsAsync(writeAtomically(dir, [{ path: '../escape', data: Buffer.from('x'), mode: 0o644 }]), { message: /must not contain '\.\.'/ });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
