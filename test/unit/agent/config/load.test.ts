import test from 'ava';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ConfigError, HelpRequested, loadAgentConfig, type ConfigEnv } from '../../../../agent/config/load';

const head = 'kind: NodeAgentConfiguration\napiVersion: nodeagent.config.svc.io/v1beta1\n';
const jsonHead = { kind: 'NodeAgentConfiguration', apiVersion: 'nodeagent.config.svc.io/v1beta1' };

/** In-memory files; readdir lists names in reverse order so tests prove the loader sorts. */
function memEnv(files: Record<string, string>, dirs: string[] = []): ConfigEnv {
  const enoent = (p: string) => Object.assign(new Error(`ENOENT: no such file or directory, open '${p}'`), { code: 'ENOENT' });
  return {
    readFile: (p) => (p in files ? Promise.resolve(files[p]) : Promise.reject(enoent(p))),
    readdir: (d) => {
      const names = Object.keys(files).filter((p) => dirname(p) === d).map((p) => basename(p));
      if (names.length === 0 && !dirs.includes(d)) return Promise.reject(enoent(d));
      return Promise.resolve(names.reverse());
    },
    hostname: () => 'Worker-7.Example.Com ',
    cwd: '/work',
  };
}

async function configError(t: import('ava').ExecutionContext, p: Promise<unknown>): Promise<ConfigError> {
  const e = await t.throwsAsync(p, { instanceOf: ConfigError });
  return e;
}

test('no flags: kubelet-like defaults everywhere', async (t) => {
  const cfg = await loadAgentConfig([], memEnv({}));
  t.is(cfg.flags.rootDir, '/var/lib/svc-node');
  t.is(cfg.flags.certDir, '/var/lib/svc-node/pki');
  t.is(cfg.flags.lockFile, '/var/run/svc-node.lock');
  t.is(cfg.nodeName, 'worker-7.example.com');
  t.is(cfg.logLevel, 'info');
  const c = cfg.config;
  t.is(c.port, 10250);
  t.is(c.readOnlyPort, 0);
  t.is(c.nodeStatusUpdateFrequency, 10_000);
  t.is(c.nodeStatusReportFrequency, 300_000);
  t.is(c.nodeLeaseDurationSeconds, 40);
  t.is(c.maxPods, 110);
  t.true(c.failSwapOn);
  t.is(c.memorySwap.swapBehavior, '');
  t.is(c.authorization.mode, 'Webhook');
  t.is(c.authorization.webhook.cacheAuthorizedTTL, 300_000);
  t.is(c.authorization.webhook.cacheUnauthorizedTTL, 30_000);
  t.is(c.authentication.webhook.cacheTTL, 120_000);
  t.false(c.authentication.anonymous.enabled);
  t.deepEqual(c.evictionHard, { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%' });
  t.is(c.containerRuntimeEndpoint, 'unix:///run/containerd/containerd.sock');
  t.is(c.imageServiceEndpoint, c.containerRuntimeEndpoint);
  t.true(cfg.featureGates.enabled('SystemdWatchdog'));
  t.deepEqual(cfg.sources, []);
});

const mergeFiles = {
  '/etc/svc/node.yaml':
    head +
    `port: 10250
maxPods: 50
clusterDNS: [10.0.0.10, 10.0.0.11]
evictionHard:
  memory.available: 200Mi
  nodefs.available: 15%
authentication:
  webhook: { enabled: true, cacheTTL: 1m }
  anonymous: { enabled: false }
staticPodURLHeader:
  X-A: [a1, a2]
  X-B: [b1]
registerWithTaints:
  - { key: a, effect: NoSchedule }
  - { key: b, value: v, effect: NoExecute }
featureGates: { ContainerCheckpoint: false, NodeSwap: true }
staticPodPath: manifests
`,
  '/etc/svc/node.conf.d/10-a.conf': head + 'maxPods: 60\nport: 11000\nregisterWithTaints:\n  - key: c\n',
  '/etc/svc/node.conf.d/20-b.conf': JSON.stringify({
    ...jsonHead,
    maxPods: 80,
    clusterDNS: ['10.0.0.53'],
    evictionHard: { 'memory.available': '300Mi' },
    authentication: { webhook: { cacheTTL: '30s' } },
    staticPodURLHeader: { 'X-A': ['z'] },
    featureGates: { NodeSwap: false },
  }),
  '/etc/svc/node.conf.d/30-ignored.yaml': 'this is not read: [',
  '/etc/svc/node.conf.d/README': 'not a drop-in',
};

test('drop-ins merge onto --config in lexical order by the Appendix D rules, flags last', async (t) => {
  const cfg = await loadAgentConfig(
    ['--config', '/etc/svc/node.yaml', '--config-dir=/etc/svc/node.conf.d', '--port', '12000', '--feature-gates=ContainerCheckpoint=true'],
    memEnv(mergeFiles),
  );
  const c = cfg.config;
  t.deepEqual(cfg.sources, ['/etc/svc/node.yaml', '/etc/svc/node.conf.d/10-a.conf', '/etc/svc/node.conf.d/20-b.conf']);
  t.is(c.port, 12000, 'flags win over file and drop-ins');
  t.is(c.maxPods, 80, 'scalars: the lexically last drop-in wins');
  t.deepEqual(c.clusterDNS, ['10.0.0.53'], 'lists are replaced whole');
  t.deepEqual(c.registerWithTaints, [{ key: 'c', value: '', effect: 'NoSchedule' }], 'list of structs replaced whole, items defaulted');
  t.deepEqual(c.evictionHard, { 'memory.available': '300Mi', 'nodefs.available': '15%' }, 'maps merge key by key');
  t.deepEqual(c.authentication.webhook, { enabled: true, cacheTTL: 30_000 }, 'structs merge field by field');
  t.deepEqual(c.staticPodURLHeader, { 'X-A': ['z'], 'X-B': ['b1'] }, 'map of string to list replaces a key whole');
  t.deepEqual(c.featureGates, { ContainerCheckpoint: true, NodeSwap: false }, 'feature gates merge per key, flags last');
  t.true(cfg.featureGates.enabled('ContainerCheckpoint'));
  t.false(cfg.featureGates.enabled('NodeSwap'));
  t.is(c.staticPodPath, '/etc/svc/manifests', 'relative paths resolve against the file that sets them');
});

test('a base file map replaces the default map; drop-ins without a base merge into the defaults', async (t) => {
  const files = {
    '/etc/svc/node.yaml': head + 'evictionHard:\n  memory.available: 1Gi\n',
    '/d/50.conf': head + 'evictionHard:\n  memory.available: 1Gi\n',
  };
  const withBase = await loadAgentConfig(['--config=/etc/svc/node.yaml'], memEnv(files));
  t.deepEqual(withBase.config.evictionHard, { 'memory.available': '1Gi' });
  const dropInOnly = await loadAgentConfig(['--config-dir=/d'], memEnv(files));
  t.deepEqual(dropInOnly.config.evictionHard, {
    'memory.available': '1Gi',
    'nodefs.available': '10%',
    'nodefs.inodesFree': '5%',
    'imagefs.available': '15%',
  });
});

test('null in a drop-in resets a field and removes a map key', async (t) => {
  const files = {
    '/etc/svc/node.yaml': head + 'maxPods: 10\n',
    '/d/1.conf': head + 'maxPods: null\nevictionHard:\n  nodefs.inodesFree: null\n',
  };
  const cfg = await loadAgentConfig(['--config=/etc/svc/node.yaml', '--config-dir=/d'], memEnv(files));
  t.is(cfg.config.maxPods, 110);
  t.false('nodefs.inodesFree' in cfg.config.evictionHard);
});

test('an empty --config-dir changes nothing; a missing one is an error naming it', async (t) => {
  const cfg = await loadAgentConfig(['--config-dir=/empty'], memEnv({}, ['/empty']));
  t.deepEqual(cfg.sources, []);
  const e = await configError(t, loadAgentConfig(['--config-dir=/nope'], memEnv({})));
  t.is(e.message, '/nope: cannot read drop-in directory (--config-dir): no such file or directory');
});

test('the bad enum message names file and field path', async (t) => {
  const files = { '/etc/svc/node.yaml': head + 'memorySwap:\n  swapBehavior: Foo\n' };
  const e = await configError(t, loadAgentConfig(['--config', '/etc/svc/node.yaml'], memEnv(files)));
  t.is(e.message, '/etc/svc/node.yaml: field memorySwap.swapBehavior: unsupported value "Foo": supported values: "NoSwap", "LimitedSwap"');
  t.false(e.message.includes('    at '), 'no stack trace in the message');
});

const errorCases: [string, string, string][] = [
  ['unknown top-level field', 'foo: 1\n', 'field foo: unknown field'],
  ['unknown nested field', 'authentication:\n  webhook:\n    enabeld: true\n', 'field authentication.webhook.enabeld: unknown field'],
  ['wrong type (string for int)', 'port: "10250"\n', 'field port: expected an integer, got string "10250"'],
  ['wrong type (float for int)', 'maxPods: 1.5\n', 'field maxPods: expected an integer, got number 1.5'],
  ['wrong type (yes is a string in YAML 1.2)', 'failSwapOn: yes\n', 'field failSwapOn: expected a boolean (true or false), got string "yes"'],
  ['wrong type (map for list)', 'clusterDNS: {a: b}\n', 'field clusterDNS: expected a list, got object'],
  ['bad list item', 'clusterDNS: [10.0.0.10, nope]\n', 'field clusterDNS[1]: invalid value "nope": must be a valid IP address'],
  ['bad enum in list of structs', 'registerWithTaints:\n  - {key: a, effect: Never}\n', 'field registerWithTaints[0].effect: unsupported value "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'],
  ['required list item field', 'registerWithTaints:\n  - {effect: NoSchedule}\n', 'field registerWithTaints[0].key: required value'],
  ['port out of range', 'port: 70000\n', 'field port: invalid value 70000: must be between 1 and 65535, inclusive'],
  ['lease duration out of range', 'nodeLeaseDurationSeconds: 0\n', 'field nodeLeaseDurationSeconds: invalid value 0: must be greater than or equal to 1'],
  ['log files out of range', 'containerLogMaxFiles: 1\n', 'field containerLogMaxFiles: invalid value 1: must be greater than or equal to 2'],
  ['log monitor interval below 3s', 'containerLogMonitorInterval: 2s\n', 'field containerLogMonitorInterval: invalid value "2s": must be at least 3s'],
  ['pids limit zero', 'podPidsLimit: 0\n', 'field podPidsLimit: invalid value 0: must be -1 (no limit) or a positive number'],
  ['duration without unit', 'nodeStatusUpdateFrequency: "10"\n', 'field nodeStatusUpdateFrequency: missing unit in duration "10"'],
  ['duration as number', 'syncFrequency: 10\n', 'field syncFrequency: expected a duration string such as "10s" or "5m0s", got number 10'],
  ['zero frequency', 'nodeStatusUpdateFrequency: 0s\n', 'field nodeStatusUpdateFrequency: invalid value "0s": must be at least 1ms'],
  ['bad eviction signal', 'evictionHard:\n  memory.free: 1Gi\n', 'field evictionHard[memory.free]: unsupported eviction signal "memory.free"'],
  ['bad eviction value', 'evictionHard:\n  nodefs.available: 150%\n', 'field evictionHard[nodefs.available]: invalid percentage "150%": must be between 0% and 100%'],
  ['bad reserved resource', 'systemReserved:\n  gpu: "1"\n', 'field systemReserved[gpu]: unsupported resource "gpu"'],
  ['bad endpoint', 'containerRuntimeEndpoint: /run/containerd/containerd.sock\n', 'field containerRuntimeEndpoint: invalid value "/run/containerd/containerd.sock": must be a unix socket URL'],
  ['unknown feature gate', 'featureGates:\n  Bogus: true\n', 'field featureGates[Bogus]: unrecognized feature gate: Bogus'],
  ['GA-locked gate set false', 'featureGates:\n  SidecarContainers: false\n', 'field featureGates[SidecarContainers]: cannot set feature gate SidecarContainers to false, feature is locked to true'],
  ['wrong kind', 'x: 1\n'.replace('x: 1', 'kind: KubeletConfiguration'), 'field kind: unsupported value "KubeletConfiguration": supported values: "NodeAgentConfiguration"'],
];

for (const [name, body, expected] of errorCases) {
  test(`error names file and field: ${name}`, async (t) => {
    // "kind" cases override the header's kind; YAML duplicate keys would be their own error, so rebuild.
    const text = body.startsWith('kind:') ? body + 'apiVersion: nodeagent.config.svc.io/v1beta1\n' : head + body;
    const e = await configError(t, loadAgentConfig(['--config=/etc/svc/node.yaml'], memEnv({ '/etc/svc/node.yaml': text })));
    t.true(e.message.startsWith(`/etc/svc/node.yaml: ${expected}`), e.message);
  });
}

test('every problem of a file is reported, one per line', async (t) => {
  const text = head + 'port: 0\nfoo: 1\nmaxPods: -1\n';
  const e = await configError(t, loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': text })));
  t.is(e.problems.length, 3);
  t.deepEqual(
    e.problems.map((p) => p.field),
    ['port', 'foo', 'maxPods'],
  );
  t.regex(e.message, /^invalid configuration \(3 problems\):\n {2}- \/c\.yaml: field port: /);
});

test('an invalid drop-in stops loading with a message naming the drop-in', async (t) => {
  const files = {
    '/etc/svc/node.yaml': head + 'maxPods: 10\n',
    '/etc/svc/d/10-ok.conf': head + 'maxPods: 20\n',
    '/etc/svc/d/20-bad.conf': JSON.stringify({ ...jsonHead, memorySwap: { swapBehavior: 'Sometimes' } }),
  };
  const e = await configError(t, loadAgentConfig(['--config=/etc/svc/node.yaml', '--config-dir', '/etc/svc/d'], memEnv(files)));
  t.is(e.message, '/etc/svc/d/20-bad.conf: field memorySwap.swapBehavior: unsupported value "Sometimes": supported values: "NoSwap", "LimitedSwap"');
});

test('drop-ins need kind and apiVersion like the base file', async (t) => {
  const files = { '/d/1.conf': 'maxPods: 3\n' };
  const e = await configError(t, loadAgentConfig(['--config-dir=/d'], memEnv(files)));
  t.deepEqual(
    e.problems.map((p) => `${p.source} ${p.field}`),
    ['/d/1.conf kind', '/d/1.conf apiVersion'],
  );
  const wrongVersion = { '/d/1.conf': 'kind: NodeAgentConfiguration\napiVersion: nodeagent.config.svc.io/v1\n' };
  const e2 = await configError(t, loadAgentConfig(['--config-dir=/d'], memEnv(wrongVersion)));
  t.is(e2.message, '/d/1.conf: field apiVersion: unsupported value "nodeagent.config.svc.io/v1": supported values: "nodeagent.config.svc.io/v1beta1"');
});

test('malformed documents are reported with position, never a stack', async (t) => {
  const cases: [string, RegExp][] = [
    [head + 'port: [1, 2\n', /^\/c\.yaml: invalid YAML or JSON at line \d+, column \d+: /],
    [head + 'port: 1\nport: 2\n', /^\/c\.yaml: invalid YAML or JSON at line 4, column 1: Map keys must be unique/],
    ['{"kind": "NodeAgentConfiguration",', /^\/c\.yaml: invalid YAML or JSON at line/],
    ['', /^\/c\.yaml: configuration file is empty$/],
    ['# only a comment\n', /^\/c\.yaml: configuration file is empty$/],
    [head + '---\n' + head, /^\/c\.yaml: configuration file holds 2 YAML documents; exactly one is expected$/],
    ['- a\n- b\n', /^\/c\.yaml: expected a NodeAgentConfiguration object at the top level, got a list$/],
  ];
  for (const [text, re] of cases) {
    const e = await configError(t, loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': text })));
    t.regex(e.message, re, JSON.stringify(text));
  }
});

test('a missing --config file is named', async (t) => {
  const e = await configError(t, loadAgentConfig(['--config', 'rel/node.yaml'], memEnv({})));
  t.is(e.message, '/work/rel/node.yaml: cannot read configuration file: no such file or directory');
});

test('cross-field problems name the file that last set the fields', async (t) => {
  const files = {
    '/etc/svc/node.yaml': head + 'imageGCHighThresholdPercent: 90\nimageGCLowThresholdPercent: 70\n',
    '/d/10.conf': head + 'maxPods: 3\n',
    '/d/20-gc.conf': head + 'imageGCLowThresholdPercent: 95\n',
  };
  const e = await configError(t, loadAgentConfig(['--config=/etc/svc/node.yaml', '--config-dir=/d'], memEnv(files)));
  t.is(e.message, '/d/20-gc.conf: field imageGCLowThresholdPercent: invalid value 95: must be less than imageGCHighThresholdPercent (90)');
});

test('cross-field rules: swap behaviour needs NodeSwap, shutdown periods, TLS pair, soft eviction grace', async (t) => {
  const run = (body: string, argv: string[] = []) =>
    configError(t, loadAgentConfig(['--config=/c.yaml', ...argv], memEnv({ '/c.yaml': head + body })));
  t.is(
    (await run('memorySwap: {swapBehavior: LimitedSwap}\n', ['--feature-gates=NodeSwap=false'])).message,
    'flag --feature-gates: field memorySwap.swapBehavior: memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled',
  );
  t.is(
    (await run('shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s\n')).message,
    '/c.yaml: field shutdownGracePeriodCriticalPods: invalid value "20s": must be <= shutdownGracePeriod (10s)',
  );
  t.is(
    (await run('shutdownGracePeriod: 30s\nfeatureGates: {GracefulNodeShutdown: false}\n')).message,
    '/c.yaml: field shutdownGracePeriod: specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown',
  );
  t.is((await run('tlsCertFile: /a.crt\n')).message, '/c.yaml: field tlsPrivateKeyFile: required value: tlsCertFile and tlsPrivateKeyFile must be set together');
  t.regex((await run('evictionSoft: {memory.available: 1Gi}\n')).message, /^\/c\.yaml: field evictionSoft\[memory.available\]: grace period must be specified/);
  const ok = await loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': head + 'evictionSoft: {memory.available: 1Gi}\nevictionSoftGracePeriod: {memory.available: 1m30s}\n' }));
  t.deepEqual(ok.config.evictionSoftGracePeriod, { 'memory.available': 90_000 });
});

test('reads real files and a real drop-in directory by default', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'd'));
  writeFileSync(join(dir, 'node.json'), JSON.stringify({ ...jsonHead, maxPods: 5, tlsCertFile: 'pki/srv.crt', tlsPrivateKeyFile: 'pki/srv.key' }));
  writeFileSync(join(dir, 'd', 'b.conf'), head + 'maxPods: 7\n');
  writeFileSync(join(dir, 'd', 'a.conf'), head + 'maxPods: 6\nclusterDomain: cluster.local\n');
  const cfg = await loadAgentConfig([`--config=${join(dir, 'node.json')}`, `--config-dir=${join(dir, 'd')}`]);
  t.is(cfg.config.maxPods, 7);
  t.is(cfg.config.clusterDomain, 'cluster.local');
  t.is(cfg.config.tlsCertFile, join(dir, 'pki/srv.crt'));
});

test('flags: both --flag=value and --flag value, and the identity flags', async (t) => {
  const cfg = await loadAgentConfig(
    [
      '--root-dir', '/srv/agent',
      '--kubeconfig=/etc/svc/kubeconfig',
      '--bootstrap-kubeconfig', 'bootstrap.kubeconfig',
      '--hostname-override', ' Node-A ',
      '--node-ip=10.1.2.3,fd00::3',
      '--node-labels', 'env=prod,example.com/rack=r1',
      '--node-labels=team=a',
      '--container-runtime-endpoint', 'unix:///run/crio/crio.sock',
      '--address=127.0.0.1',
      '--tls-cert-file', 'srv.crt',
      '--tls-private-key-file=/k/srv.key',
      '--lock-file=/run/agent.lock',
      '--fail-swap-on=false',
    ],
    memEnv({}),
  );
  t.is(cfg.flags.rootDir, '/srv/agent');
  t.is(cfg.flags.certDir, '/srv/agent/pki');
  t.is(cfg.flags.kubeconfig, '/etc/svc/kubeconfig');
  t.is(cfg.flags.bootstrapKubeconfig, '/work/bootstrap.kubeconfig');
  t.is(cfg.flags.hostnameOverride, 'node-a');
  t.is(cfg.nodeName, 'node-a');
  t.deepEqual(cfg.flags.nodeIPs, ['10.1.2.3', 'fd00::3']);
  t.deepEqual(cfg.flags.nodeLabels, { env: 'prod', 'example.com/rack': 'r1', team: 'a' });
  t.is(cfg.flags.lockFile, '/run/agent.lock');
  t.is(cfg.config.containerRuntimeEndpoint, 'unix:///run/crio/crio.sock');
  t.is(cfg.config.imageServiceEndpoint, 'unix:///run/crio/crio.sock');
  t.is(cfg.config.address, '127.0.0.1');
  t.is(cfg.config.tlsCertFile, '/work/srv.crt');
  t.false(cfg.config.failSwapOn);
});

test('flags: --cert-dir and --lock-file= override defaults', async (t) => {
  const cfg = await loadAgentConfig(['--cert-dir=/etc/svc/pki', '--lock-file='], memEnv({}));
  t.is(cfg.flags.certDir, '/etc/svc/pki');
  t.is(cfg.flags.lockFile, '');
});

test('flags: verbosity maps to levels, --log-level names one', async (t) => {
  const level = async (argv: string[]) => (await loadAgentConfig(argv, memEnv({}))).logLevel;
  t.is(await level(['--v=2']), 'info');
  t.is(await level(['--v', '4']), 'debug');
  t.is(await level(['-v', '6']), 'trace');
  t.is(await level(['-v=5']), 'trace');
  t.is(await level(['--log-level=warn']), 'warn');
  const fromFile = await loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': head + 'logging: {verbosity: 4}\n' }));
  t.is(fromFile.logLevel, 'debug');
  const flagWins = await loadAgentConfig(['--config=/c.yaml', '--v=0'], memEnv({ '/c.yaml': head + 'logging: {verbosity: 4}\n' }));
  t.is(flagWins.logLevel, 'info');
});

test('flags: every kind of bad command line is a ConfigError naming the flag', async (t) => {
  const msg = async (argv: string[]) => (await configError(t, loadAgentConfig(argv, memEnv({})))).message;
  t.is(await msg(['--no-such-flag=1']), 'command line: unknown flag: --no-such-flag');
  t.is(await msg(['-q']), "command line: unknown shorthand flag: 'q' in -q");
  t.is(await msg(['--config']), 'command line: flag needs an argument: --config');
  t.is(await msg(['run']), 'command line: unexpected argument "run": svc-node takes flags only');
  t.is(await msg(['--port=http']), 'flag --port: invalid value "http": must be an integer');
  t.is(await msg(['--port=0']), 'flag --port: invalid value 0: must be between 1 and 65535, inclusive');
  t.is(await msg(['--address=localhost']), 'flag --address: invalid value "localhost": must be a valid IP address');
  t.is(await msg(['--feature-gates=Bogus=true']), 'flag --feature-gates: unrecognized feature gate: Bogus');
  t.is(await msg(['--feature-gates=SidecarContainers=false']), 'flag --feature-gates: cannot set feature gate SidecarContainers to false, feature is locked to true');
  t.is(await msg(['--feature-gates=NodeSwap']), 'flag --feature-gates: missing bool value for NodeSwap');
  t.is(await msg(['--fail-swap-on=maybe']), 'flag --fail-swap-on: invalid value "maybe": must be true or false');
  t.is(await msg(['--log-level=loud']), 'flag --log-level: unsupported value "loud": supported values: "trace", "debug", "info", "warn", "error", "fatal", "silent"');
  t.is(await msg(['--log-level=info', '--v=2']), 'flag --log-level: cannot be combined with --v; use one of them');
  t.is(await msg(['--node-ip=10.0.0.1,10.0.0.2']), 'flag --node-ip: invalid value "10.0.0.1,10.0.0.2": at most one IPv4 and one IPv6 address');
  t.is(await msg(['--node-ip=box']), 'flag --node-ip: invalid value "box": must be an IP address');
  t.is(await msg(['--hostname-override=bad_name']), 'flag --hostname-override: invalid value "bad_name": a node name must be a lowercase RFC 1123 subdomain (letters, digits, \'-\' and \'.\')');
  t.is(await msg(['--bootstrap-kubeconfig=/b']), 'flag --bootstrap-kubeconfig: requires --kubeconfig: the identity obtained with the bootstrap token is written there');
  t.regex(await msg(['--node-labels=svc.io/role=x']), /^flag --node-labels: unknown 'svc.io' labels specified: \[svc.io\/role\]/);
});

test('--help rejects with HelpRequested carrying the usage text', async (t) => {
  for (const argv of [['--help'], ['-h'], ['--config=/missing', '--help']]) {
    const e = await t.throwsAsync(loadAgentConfig(argv, memEnv({})), { instanceOf: HelpRequested });
    t.regex(e.text, /^svc-node is the node agent/);
    for (const flag of ['--config ', '--config-dir', '--kubeconfig', '--bootstrap-kubeconfig', '--root-dir', '--cert-dir', '--hostname-override', '--node-ip', '--node-labels', '--container-runtime-endpoint', '--image-service-endpoint', '--lock-file', '--feature-gates', '--v ', '--log-level', '--port', '--address', '--tls-cert-file', '--tls-private-key-file']) {
      t.true(e.text.includes(flag), flag);
    }
    t.regex(e.text, /--root-dir string +.*\(default "\/var\/lib\/svc-node"\)/);
  }
});

test('warnings are returned for GA gates set explicitly', async (t) => {
  const cfg = await loadAgentConfig(['--feature-gates=SidecarContainers=true'], memEnv({}));
  t.deepEqual(cfg.warnings, ['Setting GA feature gate SidecarContainers=true. It will be removed in a future release.']);
});

test('checkpointRetention: defaults, and a bad cron expression names the file and the field', async (t) => {
  const d = await loadAgentConfig([], memEnv({}));
  t.deepEqual(d.config.checkpointRetention, { schedule: '*/10 * * * *', maxPerContainer: 10, maxAge: 0 });
  const ok = await loadAgentConfig(['--config', '/c.yaml'], memEnv({ '/c.yaml': head + 'checkpointRetention:\n  schedule: "0 3 * * *"\n  maxPerContainer: 0\n  maxAge: 72h\n' }));
  t.deepEqual(ok.config.checkpointRetention, { schedule: '0 3 * * *', maxPerContainer: 0, maxAge: 72 * 3600_000 });
  const off = await loadAgentConfig(['--config', '/c.yaml'], memEnv({ '/c.yaml': head + 'checkpointRetention:\n  schedule: ""\n' }));
  t.is(off.config.checkpointRetention.schedule, '');
  for (const bad of ['every day', '61 * * * *', '* * * *']) {
    const e = await configError(t, loadAgentConfig(['--config', '/etc/svc/node.yaml'], memEnv({ '/etc/svc/node.yaml': head + `checkpointRetention:\n  schedule: "${bad}"\n` })));
    t.true(e.message.startsWith('/etc/svc/node.yaml: field checkpointRetention.schedule: invalid cron expression'), e.message);
    t.false(e.message.includes('    at '));
  }
  const neg = await configError(t, loadAgentConfig(['--config', '/c.yaml'], memEnv({ '/c.yaml': head + 'checkpointRetention:\n  maxPerContainer: -1\n' })));
  t.regex(neg.message, /^\/c\.yaml: field checkpointRetention\.maxPerContainer: /);
});

test('device plugin settings: defaults (5m grace as upstream, 1m admission wait, 30s call timeout) and overrides', async (t) => {
  const d = (await loadAgentConfig([], memEnv({}))).config;
  t.is(d.devicePluginGracePeriod, 300_000);
  t.is(d.devicePluginAdmissionWait, 60_000);
  t.is(d.devicePluginCallTimeout, 30_000);
  const body = 'devicePluginGracePeriod: 30s\ndevicePluginAdmissionWait: 0s\ndevicePluginCallTimeout: 2s\n';
  const c = (await loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': head + body }))).config;
  t.is(c.devicePluginGracePeriod, 30_000);
  t.is(c.devicePluginAdmissionWait, 0);
  t.is(c.devicePluginCallTimeout, 2000);
  const e = await configError(t, loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': head + 'devicePluginCallTimeout: 0s\n' })));
  t.regex(e.message, /devicePluginCallTimeout/);
});

test('container log rotation settings: defaults (10Mi, 5 files, every 10s as upstream) and overrides', async (t) => {
  const d = (await loadAgentConfig([], memEnv({}))).config;
  t.is(d.containerLogMaxSize, '10Mi');
  t.is(d.containerLogMaxFiles, 5);
  t.is(d.containerLogMonitorInterval, 10_000);
  const body = 'containerLogMaxSize: 100Ki\ncontainerLogMaxFiles: 3\ncontainerLogMonitorInterval: 3s\n';
  const c = (await loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': head + body }))).config;
  t.deepEqual([c.containerLogMaxSize, c.containerLogMaxFiles, c.containerLogMonitorInterval], ['100Ki', 3, 3000]);
});

test('cluster DNS settings: off by default; enabling needs clusterDomain and an address; bad values name the file and field', async (t) => {
  const d = (await loadAgentConfig([], memEnv({}))).config;
  t.deepEqual(d.dns, { enabled: false, listenAddress: '', port: 53, upstreamTimeout: 2000, cacheSize: 9984, interfaceName: '', pods: 'insecure' });
  const run = (body: string) => loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': head + body }));
  t.regex((await configError(t, run('dns: {interfaceName: "no/slash"}\n'))).message, /^\/c\.yaml: field dns\.interfaceName: invalid value "no\/slash": must be a network interface name/);
  t.is((await run('dns: {pods: verified}\n')).config.dns.pods, 'verified');
  t.regex((await configError(t, run('dns: {pods: secure}\n'))).message, /^\/c\.yaml: field dns\.pods: .*secure/);
  const ok = (await run('clusterDomain: cluster.local\nclusterDNS: [169.254.20.10]\ndns: {enabled: true, port: 5353}\n')).config;
  t.like(ok.dns, { enabled: true, port: 5353 });
  t.is((await configError(t, run('clusterDNS: [169.254.20.10]\ndns: {enabled: true}\n'))).message, '/c.yaml: field clusterDomain: required value: the cluster DNS server (dns.enabled) needs clusterDomain, e.g. "cluster.local"');
  t.is(
    (await configError(t, run('clusterDomain: cluster.local\ndns: {enabled: true}\n'))).message,
    '/c.yaml: field dns.listenAddress: required value: set dns.listenAddress or clusterDNS when dns.enabled is true (the address pods are told to query)',
  );
  t.is((await configError(t, run('dns: {listenAddress: nope}\n'))).message, '/c.yaml: field dns.listenAddress: invalid value "nope": must be a valid IP address');
  t.regex((await configError(t, run('dns: {port: 0}\n'))).message, /^\/c\.yaml: field dns\.port: invalid value 0/);
});

test('pod network settings: defaults (/etc/cni/net.d, routes on) and overrides; a relative cniConfDir is refused naming the field', async (t) => {
  const d = (await loadAgentConfig([], memEnv({}))).config;
  t.is(d.cniConfDir, '/etc/cni/net.d');
  t.true(d.configurePodCIDRRoutes);
  const c = (await loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': head + 'cniConfDir: /var/lib/rancher/cni\nconfigurePodCIDRRoutes: false\n' }))).config;
  t.is(c.cniConfDir, '/var/lib/rancher/cni');
  t.false(c.configurePodCIDRRoutes);
  const e = await configError(t, loadAgentConfig(['--config=/c.yaml'], memEnv({ '/c.yaml': head + 'cniConfDir: net.d\n' })));
  t.regex(e.message, /field cniConfDir: invalid value "net\.d": must be an absolute path/);
});
