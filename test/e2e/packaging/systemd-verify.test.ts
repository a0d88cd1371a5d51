import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from '../../../agent/config/flags';
import { parseFlags } from '../../../apiserver/config/flags';
import { verifyUnits } from './systemd-analyze';
import { execArgs, readUnit, value, values } from './unit-file';

const repoRoot = join(__dirname, '..', '..', '..', '..');
const nodeUnit = join(repoRoot, 'systemd', 'svc-node.service');
const apiserverUnit = join(repoRoot, 'systemd', 'svc-apiserver.service');
// The dev tree's launchers stand in for the packaged ones (deb.test.ts verifies the installed units).
const executables = {
  '/usr/bin/svc-node': join(repoRoot, 'bin', 'svc-node'),
  '/usr/bin/svc-apiserver': join(repoRoot, 'bin', 'svc-apiserver'),
};

test('systemd-analyze verify accepts both units without a single message', async (t) => {
  const r = await verifyUnits({ units: [nodeUnit, apiserverUnit], executables });
  t.is(r.output, '', 'verify printed warnings');
  t.is(r.code, 0);
});

test('the verify check notices an unknown key, which its exit code alone would miss', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-unit-'));
  try {
    const broken = join(dir, 'svc-node.service');
    writeFileSync(broken, readFileSync(nodeUnit, 'utf8').replace('WatchdogSec=15s', 'WatchdogSecs=15s'));
    const r = await verifyUnits({ units: [broken], executables });
    t.regex(r.output, /Unknown key 'WatchdogSecs' in section \[Service\]/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('svc-node.service: notify with a 15 s watchdog, restarts forever, containers survive restarts, runtime wanted not required', (t) => {
  const u = readUnit(nodeUnit);
  t.is(value(u, 'Service', 'Type'), 'notify');
  t.is(value(u, 'Service', 'NotifyAccess'), 'main');
  t.is(value(u, 'Service', 'WatchdogSec'), '15s');
  t.is(value(u, 'Service', 'Restart'), 'always');
  t.is(value(u, 'Service', 'RestartSec'), '10s');
  t.is(value(u, 'Unit', 'StartLimitIntervalSec'), '0');
  t.is(value(u, 'Service', 'KillMode'), 'process');
  t.is(value(u, 'Service', 'Delegate'), 'yes');
  t.is(value(u, 'Service', 'OOMScoreAdjust'), undefined, 'no OOMScoreAdjust at all');
  t.true(values(u, 'Unit', 'Documentation').length > 0);
  for (const key of ['Wants', 'After']) {
    const names = values(u, 'Unit', key).join(' ').split(/\s+/);
    t.true(names.includes('containerd.service'), `${key}= names containerd.service`);
    t.true(names.includes('network-online.target'), `${key}= names network-online.target`);
  }
  t.deepEqual(values(u, 'Unit', 'Requires'), [], 'the agent starts without a runtime and reports NotReady');
  t.deepEqual(values(u, 'Unit', 'ConditionPathExists'), ['|/etc/svc/node.kubeconfig', '|/etc/svc/bootstrap.kubeconfig']);
  t.is(value(u, 'Service', 'EnvironmentFile'), '-/etc/default/svc-node');
  t.is(value(u, 'Install', 'WantedBy'), 'multi-user.target');
  // Anything that gives the agent its own mount namespace would hide its volume mounts from the runtime.
  for (const key of ['ProtectSystem', 'ProtectHome', 'PrivateTmp', 'PrivateDevices', 'PrivateMounts', 'ReadOnlyPaths', 'MountFlags', 'RestrictSUIDSGID', 'MemoryDenyWriteExecute']) {
    t.is(value(u, 'Service', key), undefined, `${key} must not be set on the agent`);
  }
});

test("svc-node.service's ExecStart passes flags the agent accepts, in the paths the package installs", (t) => {
  const [bin, ...args] = execArgs(readUnit(nodeUnit));
  t.is(bin, '/usr/bin/svc-node');
  t.is(args.at(-1), '$SVC_NODE_ARGS', 'admin flags come last, so they win');
  const parsed = parseArgs(args.slice(0, -1));
  t.deepEqual(
    Object.fromEntries([...parsed.values].map(([k, v]) => [k, v.at(-1)])),
    {
      config: '/etc/svc/node.yaml',
      'config-dir': '/etc/svc/node.conf.d',
      kubeconfig: '/etc/svc/node.kubeconfig',
      'bootstrap-kubeconfig': '/etc/svc/bootstrap.kubeconfig',
    },
  );
  t.regex(readFileSync(join(repoRoot, 'systemd', 'default', 'svc-node'), 'utf8'), /^SVC_NODE_ARGS=""$/m);
});

test('svc-apiserver.service: notify, unprivileged in its own state directory, read-only everywhere else', (t) => {
  const u = readUnit(apiserverUnit);
  t.is(value(u, 'Service', 'Type'), 'notify');
  t.is(value(u, 'Service', 'User'), 'svc-apiserver');
  t.is(value(u, 'Service', 'StateDirectory'), 'svc-apiserver');
  t.is(value(u, 'Service', 'StateDirectoryMode'), '0700');
  t.is(value(u, 'Service', 'ProtectSystem'), 'strict');
  t.is(value(u, 'Service', 'NoNewPrivileges'), 'yes');
  t.is(value(u, 'Service', 'PrivateTmp'), 'yes');
  t.is(value(u, 'Service', 'CapabilityBoundingSet'), '');
  t.is(value(u, 'Service', 'MemoryDenyWriteExecute'), undefined, "V8's JIT needs writable+executable memory");
  const [bin, ...args] = execArgs(u);
  t.is(bin, '/usr/bin/svc-apiserver');
  t.is(args.at(-1), '$SVC_APISERVER_ARGS');
  t.is(parseFlags(args.slice(0, -1)).dataDir, '/var/lib/svc-apiserver');
  t.regex(readFileSync(join(repoRoot, 'systemd', 'default', 'svc-apiserver'), 'utf8'), /^SVC_APISERVER_ARGS=""$/m);
  const users = readFileSync(join(repoRoot, 'systemd', 'sysusers.d', 'svc.conf'), 'utf8');
  t.regex(users, /^u svc-apiserver /m, 'sysusers.d creates the user the unit runs as');
});
