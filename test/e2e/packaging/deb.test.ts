/**
 * The Debian package end to end: `npm run package`'s build script makes the .deb once for this
 * file; lintian gates it; it is installed into scratch roots with dpkg (maintainer scripts and
 * all, see scratch-root.ts), its programs are run from the installed files, it is upgraded to a
 * rebuilt package with changed conffiles, removed and purged. The machine itself is never changed.
 * Needs root (dpkg chowns what it unpacks), lintian, patchelf, python3 and etcd, which .ci/run installs.
 */
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { loadAgentConfig } from '../../../agent/config/load';
import { startEtcd } from '../../helpers/etcd-process';
import { freePort } from '../../helpers/free-port';
import { notifyReceiver, waitFor } from './notify-receiver';
import { dpkgInstall, dpkgPurge, dpkgRemove, dpkgStatus, listTree, makeScratchRoot, run, runOk } from './scratch-root';
import { verifyUnits } from './systemd-analyze';
import { readUnit, values } from './unit-file';

const repoRoot = join(__dirname, '..', '..', '..', '..');
const pkgVersion = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const conffiles = ['/etc/default/svc-apiserver', '/etc/default/svc-node', '/etc/svc/node.conf.d/README', '/etc/svc/node.yaml'];

let work = '';
let deb = '';
/** The scratch root the install/upgrade/remove tests share. */
let root = '';
const cleanups: (() => unknown)[] = [];

function requireTool(path: string, pkg: string): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: apt-get install -y ${pkg} (.ci/run installs it)`);
}

test.before(async () => {
  if (process.getuid?.() !== 0) throw new Error('the package tests need root: dpkg --root chowns what it unpacks (CI runs as root)');
  requireTool('/usr/bin/lintian', 'lintian');
  requireTool('/usr/bin/patchelf', 'patchelf');
  requireTool('/usr/bin/dpkg-shlibdeps', 'dpkg-dev');
  requireTool('/usr/bin/systemd-sysusers', 'systemd');
  work = mkdtempSync(join(tmpdir(), 'svc-deb-test-'));
  const r = await runOk(process.execPath, [join(repoRoot, 'packaging', 'build-deb.mjs'), '--out', join(work, 'out')]);
  deb = r.stdout.trim().split('\n').at(-1)!;
  root = makeScratchRoot(work);
});

test.after.always(async () => {
  for (const c of cleanups.reverse()) await c();
  if (work) rmSync(work, { recursive: true, force: true });
});

test.serial('lintian finds no error and no warning; the only override is the documented one', async (t) => {
  // Informational tags (I:) are accepted; each is listed with its reason in packaging/README.md.
  const r = await run('lintian', ['--fail-on', 'error,warning', deb]);
  t.deepEqual(r.stdout.split('\n').filter((l) => /^[EW]: /.test(l)), [], r.stdout);
  t.is(r.code, 0, r.stdout + r.stderr);
  const overrides = join(work, 'overrides');
  await runOk('dpkg-deb', ['-x', deb, overrides]);
  const lines = readFileSync(join(overrides, 'usr/share/lintian/overrides/svc'), 'utf8').split('\n');
  t.deepEqual(lines.filter((l) => l.trim() !== '' && !l.startsWith('#')), ['initial-upload-closes-no-bugs'], 'overrides are explained in packaging/README.md');
});

test.serial('the package holds the bundles, native modules, units, conffiles, profiles, man pages, copyright and changelog', async (t) => {
  const listing = (await runOk('dpkg-deb', ['-c', deb])).stdout;
  const entries = new Map(
    listing
      .trim()
      .split('\n')
      .map((l) => {
        const parts = l.split(/\s+/);
        return [parts.slice(5).join(' ').replace(/^\.\//, '/').replace(/\/$/, ''), { perms: parts[0], owner: parts[1] }] as const;
      }),
  );
  const expect = {
    '/usr/bin/svc-node': '-rwxr-xr-x',
    '/usr/bin/svc-apiserver': '-rwxr-xr-x',
    '/usr/lib/svc/svc-node.js': '-rw-r--r--',
    '/usr/lib/svc/svc-apiserver.js': '-rw-r--r--',
    '/usr/lib/svc/x509-child.js': '-rw-r--r--',
    '/usr/lib/svc/package.json': '-rw-r--r--',
    '/usr/lib/svc/proto/cri/runtime/v1/api.proto': '-rw-r--r--',
    '/usr/lib/svc/etcd3/proto/rpc.proto': '-rw-r--r--',
    '/usr/lib/svc/node_modules/better-sqlite3/build/Release/better_sqlite3.node': '-rw-r--r--',
    '/usr/lib/svc/node_modules/sd-notify/build/Release/notify.node': '-rw-r--r--',
    '/usr/lib/svc/node_modules/bindings/bindings.js': '-rw-r--r--',
    '/lib/systemd/system/svc-node.service': '-rw-r--r--',
    '/lib/systemd/system/svc-apiserver.service': '-rw-r--r--',
    '/usr/lib/tmpfiles.d/svc.conf': '-rw-r--r--',
    '/usr/lib/sysusers.d/svc.conf': '-rw-r--r--',
    '/etc/svc/node.yaml': '-rw-r--r--',
    '/etc/svc/node.conf.d/README': '-rw-r--r--',
    '/etc/default/svc-node': '-rw-r--r--',
    '/etc/default/svc-apiserver': '-rw-r--r--',
    '/var/lib/svc-node/seccomp/audit.json': '-rw-r--r--',
    '/var/lib/svc-node/seccomp/example-deny-dangerous.json': '-rw-r--r--',
    '/usr/share/man/man8/svc-node.8.gz': '-rw-r--r--',
    '/usr/share/man/man8/svc-apiserver.8.gz': '-rw-r--r--',
    '/usr/share/doc/svc/copyright': '-rw-r--r--',
    '/usr/share/doc/svc/changelog.Debian.gz': '-rw-r--r--',
  };
  for (const [path, perms] of Object.entries(expect)) t.is(entries.get(path)?.perms, perms, path);
  t.true([...entries.values()].every((e) => e.owner === 'root/root'), 'everything is owned by root');
  const stray = [...entries.keys()].filter((p) => /\.(ts|map|md)$|\/test_extension\.node$|\/(src|deps|obj\.target)\//.test(p) && p !== '/usr/share/doc/svc/install.md');
  t.deepEqual(stray, [], 'no sources, maps, build leftovers or test addons');

  const control = (await runOk('dpkg-deb', ['-f', deb])).stdout;
  t.regex(control, /^Version: \S+-\d+$/m);
  t.true(control.includes(`Version: ${pkgVersion}-`), 'the upstream version is package.json\'s');
  const depends = /^Depends: (.*)$/m.exec(control)![1];
  t.regex(depends, /nodejs \(>= 20\.19\), nodejs \(<< \d+\)/);
  t.regex(depends, /libsystemd0/);
  t.regex(depends, /libc6/);
  t.regex(control, /^Recommends: containerd$/m);
  const declared = (await runOk('dpkg-deb', ['-I', deb, 'conffiles'])).stdout.trim().split('\n').sort();
  t.deepEqual(declared, conffiles);

  const extracted = join(work, 'extracted');
  await runOk('dpkg-deb', ['-x', deb, extracted]);
  const copyright = readFileSync(join(extracted, 'usr/share/doc/svc/copyright'), 'utf8');
  t.true(copyright.startsWith('Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'));
  for (const name of ['better-sqlite3', 'sd-notify', 'bindings', 'pino', 'yaml', 'undici', '@grpc/grpc-js']) t.true(copyright.includes(`Files: node_modules/${name}/*`), name);
  t.regex(copyright, /^License: Expat$/m);
});

test.serial('installing creates the user, state directories with their modes, and enables svc-node only', async (t) => {
  await dpkgInstall(root, deb);
  t.is(dpkgStatus(root, 'svc')?.['Status'], 'install ok installed');
  const passwd = readFileSync(join(root, 'etc/passwd'), 'utf8');
  const user = /^svc-apiserver:x:(\d+):(\d+):[^:]*:\/var\/lib\/svc-apiserver:\/usr\/sbin\/nologin$/m.exec(passwd);
  t.truthy(user, passwd);
  const tree = listTree(root);
  t.like(tree.get('var/lib/svc-node'), { type: 'dir', mode: 0o750, uid: 0 });
  t.like(tree.get('var/lib/svc-node/seccomp'), { type: 'dir', mode: 0o750, uid: 0 });
  t.like(tree.get('var/lib/svc-apiserver'), { type: 'dir', mode: 0o700, uid: Number(user![1]), gid: Number(user![2]) });
  t.like(tree.get('usr/bin/svc-node'), { type: 'file', mode: 0o755 });
  const wants = join(root, 'etc/systemd/system/multi-user.target.wants');
  t.is(readlinkSync(join(wants, 'svc-node.service')), '/lib/systemd/system/svc-node.service');
  t.false(existsSync(join(wants, 'svc-apiserver.service')), 'svc-apiserver is not enabled on installation');
  const status = dpkgStatus(root, 'svc')!;
  for (const c of conffiles) t.true(status['Conffiles']?.includes(c), `${c} is recorded as a conffile`);
});

test.serial('the installed default configuration loads and equals the built-in defaults, also with every line uncommented', async (t) => {
  const yamlPath = join(root, 'etc/svc/node.yaml');
  const env = { hostname: () => 'pkg-node' };
  const builtIn = await loadAgentConfig([], env);
  const shipped = await loadAgentConfig([`--config=${yamlPath}`, `--config-dir=${join(root, 'etc/svc/node.conf.d')}`], env);
  t.deepEqual(shipped.config, builtIn.config);
  const uncommented = join(work, 'node-uncommented.yaml');
  const text = readFileSync(yamlPath, 'utf8');
  const fieldsAt = text.indexOf('kind: NodeAgentConfiguration\n') + 'kind: NodeAgentConfiguration\n'.length;
  t.true(fieldsAt > 'kind: NodeAgentConfiguration\n'.length);
  t.deepEqual(text.slice(fieldsAt).split('\n').filter((l) => l !== '' && !l.startsWith('# ')), [], 'every field line is commented out');
  writeFileSync(uncommented, text.slice(0, fieldsAt) + text.slice(fieldsAt).replace(/^# /gm, ''));
  const all = await loadAgentConfig([`--config=${uncommented}`], env);
  t.deepEqual(all.config, builtIn.config);
  t.true(all.sources.includes(uncommented));
});

test.serial('systemd-analyze verify is silent on the installed units, launchers and man pages', async (t) => {
  const r = await verifyUnits({
    units: [join(root, 'lib/systemd/system/svc-node.service'), join(root, 'lib/systemd/system/svc-apiserver.service')],
    executables: { '/usr/bin/svc-node': join(root, 'usr/bin/svc-node'), '/usr/bin/svc-apiserver': join(root, 'usr/bin/svc-apiserver') },
    manPath: join(root, 'usr/share/man'),
  });
  t.is(r.output, '');
  t.is(r.code, 0);
});

test.serial('the installed programs print their version', async (t) => {
  for (const name of ['svc-node', 'svc-apiserver']) {
    const r = await runOk(join(root, 'usr/bin', name), ['--version']);
    t.is(r.stdout.trim(), `${name} v${pkgVersion}`);
  }
});

test.serial('a broken configuration stops the installed programs with a readable message and an exit status the units do not restart on', async (t) => {
  const broken = join(work, 'broken.yaml');
  writeFileSync(broken, 'apiVersion: nodeagent.config.svc.io/v1beta1\nkind: NodeAgentConfiguration\nmaxPods: many\n');
  const node = await run(join(root, 'usr/bin/svc-node'), [`--config=${broken}`, `--root-dir=${join(work, 'broken-root')}`, `--lock-file=${join(work, 'broken.lock')}`]);
  t.regex(node.stderr, /broken\.yaml/, 'names the file');
  t.regex(node.stderr, /maxPods/, 'names the field');
  const nodeUnit = readUnit(join(root, 'lib/systemd/system/svc-node.service'));
  t.true(values(nodeUnit, 'Service', 'RestartPreventExitStatus').join(' ').split(/\s+/).includes(String(node.code)), `svc-node exited ${node.code}, which RestartPreventExitStatus= must list so the unit stays failed instead of crash-looping`);

  const api = await run(join(root, 'usr/bin/svc-apiserver'), ['--secure-port=not-a-port']);
  t.regex(api.stderr, /--secure-port/);
  const apiUnit = readUnit(join(root, 'lib/systemd/system/svc-apiserver.service'));
  t.true(values(apiUnit, 'Service', 'RestartPreventExitStatus').join(' ').split(/\s+/).includes(String(api.code)), `svc-apiserver exited ${api.code}`);
});

interface Started {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv): Started {
  const proc = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  cleanups.push(() => proc.exitCode === null && proc.kill('SIGKILL'));
  return { proc, output: () => out, exited };
}

/** Starts the installed svc-apiserver on a free port with a fake NOTIFY_SOCKET; resolves once READY=1 arrived. */
async function startInstalledApiServer(name: string, extraArgs: string[] = []) {
  const dir = join(work, name);
  mkdirSync(dir);
  const port = await freePort();
  const receiver = notifyReceiver(repoRoot, join(dir, 'notify.sock'));
  cleanups.push(() => receiver.kill());
  await receiver.ready;
  const server = start(
    join(root, 'usr/bin/svc-apiserver'),
    [`--data-dir=${join(dir, 'data')}`, '--bind-address=127.0.0.1', `--secure-port=${port}`, '--log-level=warn', ...extraArgs],
    { ...process.env, NOTIFY_SOCKET: join(dir, 'notify.sock') },
  );
  await waitFor(`READY=1 from svc-apiserver\n${server.output()}`, () => (receiver.got.some((g) => g.data === 'READY=1') ? true : server.proc.exitCode !== null ? Promise.reject(new Error(server.output())) : undefined));
  const pki = join(dir, 'data', 'pki');
  const admin = new Agent({
    connect: { ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')), servername: 'localhost' },
  });
  cleanups.push(() => admin.close());
  const get = async (path: string) => {
    const res = await request(`https://127.0.0.1:${port}${path}`, { dispatcher: admin });
    return { status: res.statusCode, text: await res.body.text() };
  };
  return { dir, port, receiver, server, get, kubeconfig: join(dir, 'data', 'admin.kubeconfig') };
}

test.serial('installed svc-apiserver and svc-node start under a fake NOTIFY_SOCKET, report READY=1, and the node becomes Ready', async (t) => {
  const api = await startInstalledApiServer('api-sqlite');
  t.true(api.receiver.got.every((g) => g.pid === api.server.proc.pid), 'READY=1 comes from the main process (NotifyAccess=main)');

  const nodeDir = join(work, 'node');
  mkdirSync(nodeDir);
  const receiver = notifyReceiver(repoRoot, join(nodeDir, 'notify.sock'));
  cleanups.push(() => receiver.kill());
  await receiver.ready;
  const agent = start(
    join(root, 'usr/bin/svc-node'),
    [
      `--config=${join(root, 'etc/svc/node.yaml')}`,
      `--config-dir=${join(root, 'etc/svc/node.conf.d')}`,
      `--kubeconfig=${api.kubeconfig}`,
      `--root-dir=${join(nodeDir, 'root')}`,
      `--lock-file=${join(nodeDir, 'svc-node.lock')}`,
      '--hostname-override=pkg-test-node',
      // The test machine may have swap on; the agent's refusal is tested elsewhere.
      '--fail-swap-on=false',
      // No containerd here: the built-in CRI simulator (test/e2e/pods runs real containerd).
      '--container-runtime-endpoint=sim://',
      `--port=${api.port + 1}`,
    ],
    { ...process.env, NOTIFY_SOCKET: join(nodeDir, 'notify.sock'), WATCHDOG_USEC: '15000000' },
  );
  await waitFor('READY=1 from svc-node', () => (receiver.got.some((g) => g.data === 'READY=1') ? true : agent.proc.exitCode !== null ? Promise.reject(new Error(agent.output())) : undefined));
  t.true(receiver.got.every((g) => g.pid === agent.proc.pid), 'the launcher execs node: messages come from the main pid');
  t.true(receiver.got.some((g) => g.data === 'WATCHDOG=1'), 'keep-alives under WatchdogSec');
  const ready = await waitFor('node pkg-test-node Ready', async () => {
    const r = await api.get('/api/v1/nodes/pkg-test-node');
    if (r.status !== 200) return undefined;
    const node = JSON.parse(r.text) as { status?: { conditions?: { type: string; status: string }[] } };
    return node.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
  });
  t.is(ready.status, 'True');

  agent.proc.kill('SIGTERM');
  t.is(await agent.exited, 0, agent.output());
  t.is(await receiver.exited, 0, 'svc-node sent STOPPING=1');
  api.server.proc.kill('SIGTERM');
  t.is(await api.server.exited, 0, api.server.output());
  t.is(await api.receiver.exited, 0, 'svc-apiserver sent STOPPING=1');
});

test.serial('installed svc-apiserver serves from etcd: the etcd client finds its proto files in the package', async (t) => {
  const etcd = await startEtcd();
  cleanups.push(() => etcd.stop());
  const api = await startInstalledApiServer('api-etcd', [`--etcd-servers=${etcd.endpoint}`]);
  const ready = await waitFor('readyz 200 on etcd', async () => {
    const r = await api.get('/readyz');
    return r.status === 200 ? r : undefined;
  });
  t.is(ready.text, 'ok');
  // Clean shutdown is checked on SQLite above; here only the etcd client matters.
  api.server.proc.kill('SIGKILL');
  await api.server.exited;
  await etcd.stop();
});

/** Rebuilds the .deb as version <upstream>-<revision>, with `edit` applied to its unpacked tree. */
async function rebuild(revision: string, edit: (tree: string) => void): Promise<string> {
  const tree = join(work, `repack-${revision}`);
  await runOk('dpkg-deb', ['-R', deb, tree]);
  const controlPath = join(tree, 'DEBIAN/control');
  writeFileSync(controlPath, readFileSync(controlPath, 'utf8').replace(/^Version: .*$/m, `Version: ${pkgVersion}-${revision}`));
  edit(tree);
  const out = join(work, `svc_${pkgVersion}-${revision}.deb`);
  await runOk('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', tree, out]);
  return out;
}

test.serial("upgrading keeps the admin's edited conffile, takes untouched ones, keeps state and enablement choices", async (t) => {
  // The admin edits node.yaml, adds a drop-in and state exists; disables svc-node, enables svc-apiserver.
  appendFileSync(join(root, 'etc/svc/node.yaml'), 'maxPods: 50\n');
  writeFileSync(join(root, 'etc/svc/node.conf.d/50-local.conf'), 'apiVersion: nodeagent.config.svc.io/v1beta1\nkind: NodeAgentConfiguration\nport: 10260\n');
  writeFileSync(join(root, 'var/lib/svc-node/state-file'), 'state');
  const wants = join(root, 'etc/systemd/system/multi-user.target.wants');
  unlinkSync(join(wants, 'svc-node.service'));
  symlinkSync('/lib/systemd/system/svc-apiserver.service', join(wants, 'svc-apiserver.service'));

  const next = await rebuild('2', (tree) => {
    appendFileSync(join(tree, 'etc/svc/node.yaml'), '# changed in the next package\n');
    appendFileSync(join(tree, 'etc/default/svc-node'), '# changed in the next package\n');
  });
  await dpkgInstall(root, next, ['--force-confold']);
  t.is(dpkgStatus(root, 'svc')?.['Version'], `${pkgVersion}-2`);
  const yaml = readFileSync(join(root, 'etc/svc/node.yaml'), 'utf8');
  t.true(yaml.endsWith('maxPods: 50\n'), "the admin's node.yaml is kept");
  t.true(readFileSync(join(root, 'etc/svc/node.yaml.dpkg-dist'), 'utf8').endsWith('# changed in the next package\n'), 'the new one is beside it');
  t.true(readFileSync(join(root, 'etc/default/svc-node'), 'utf8').endsWith('# changed in the next package\n'), 'an untouched conffile is updated');
  t.true(existsSync(join(root, 'etc/svc/node.conf.d/50-local.conf')));
  const cfg = await loadAgentConfig([`--config=${join(root, 'etc/svc/node.yaml')}`, `--config-dir=${join(root, 'etc/svc/node.conf.d')}`], { hostname: () => 'pkg-node' });
  t.is(cfg.config.maxPods, 50);
  t.is(cfg.config.port, 10260);
  t.is(readFileSync(join(root, 'var/lib/svc-node/state-file'), 'utf8'), 'state');
  t.is(statSync(join(root, 'var/lib/svc-node')).mode & 0o7777, 0o750, 'postinst tightens the state directory again after dpkg unpacked it');
  t.false(existsSync(join(wants, 'svc-node.service')), 'svc-node stays disabled');
  t.is(readlinkSync(join(wants, 'svc-apiserver.service')), '/lib/systemd/system/svc-apiserver.service', 'svc-apiserver stays enabled');
});

/** Starts the installed svc-node against an installed API server; `name` is the node and its directory. */
function startInstalledNode(name: string, api: { port: number; kubeconfig: string }, port: number): Started {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  return start(
    join(root, 'usr/bin/svc-node'),
    [
      `--config=${join(root, 'etc/svc/node.yaml')}`,
      `--config-dir=${join(root, 'etc/svc/node.conf.d')}`,
      `--kubeconfig=${api.kubeconfig}`,
      `--root-dir=${join(dir, 'root')}`,
      `--lock-file=${join(dir, 'svc-node.lock')}`,
      `--hostname-override=${name}`,
      '--fail-swap-on=false',
      '--container-runtime-endpoint=sim://',
      `--port=${port}`,
    ],
    { ...process.env },
  );
}

test.serial('upgrading under a running agent: it keeps heartbeating from the replaced files, stops cleanly, and the new files start', async (t) => {
  // Issue 10, bad input "installing over a running older version". Without systemd as PID 1 the
  // postinst restarts nothing, so the old process runs on over the unpacked files: the state a
  // node is in between dpkg's unpack and systemd's try-restart, kept here for as long as it takes.
  const api = await startInstalledApiServer('api-upgrade');
  const name = 'pkg-upgrade-node';
  const renewTime = async () => {
    const r = await api.get(`/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/${name}`);
    return r.status === 200 ? ((JSON.parse(r.text) as { spec?: { renewTime?: string } }).spec?.renewTime ?? undefined) : undefined;
  };
  /** Resolves once the Lease is renewed after `after` (undefined: once it exists); rejects if the agent exits. */
  const renewedAfter = (agent: Started, after: string | undefined, what: string) =>
    waitFor(
      what,
      async () => {
        if (agent.proc.exitCode !== null) throw new Error(`svc-node exited ${agent.proc.exitCode}:\n${agent.output()}`);
        const now = await renewTime();
        return now !== undefined && (after === undefined || Date.parse(now) > Date.parse(after)) ? now : undefined;
      },
      90_000,
    );
  const old = startInstalledNode(name, api, api.port + 1);
  const first = await renewedAfter(old, undefined, 'the Lease of the agent started from the old package');

  const next = await rebuild('3', () => undefined);
  await dpkgInstall(root, next, ['--force-confold']);
  t.is(dpkgStatus(root, 'svc')?.['Version'], `${pkgVersion}-3`);
  const unpacked = await renewTime();
  await renewedAfter(old, unpacked ?? first, 'a Lease renewal by the old process after the upgrade');
  t.is(old.proc.exitCode, null, 'the old process survives the unpack');
  old.proc.kill('SIGTERM');
  t.is(await old.exited, 0, old.output());

  const fresh = startInstalledNode(name, api, api.port + 1);
  const stoppedAt = await renewTime();
  await renewedAfter(fresh, stoppedAt, 'a Lease renewal by the agent started from the new files');
  fresh.proc.kill('SIGTERM');
  t.is(await fresh.exited, 0, fresh.output());
  api.server.proc.kill('SIGTERM');
  t.is(await api.server.exited, 0, api.server.output());
});

test.serial('remove keeps configuration and state; purge with keep-on-purge keeps only the agent state', async (t) => {
  await dpkgRemove(root, 'svc');
  t.is(dpkgStatus(root, 'svc')?.['Status'], 'deinstall ok config-files');
  t.false(existsSync(join(root, 'usr/bin/svc-node')));
  t.false(existsSync(join(root, 'var/lib/svc-node/seccomp/audit.json')), 'package files go on remove');
  t.true(existsSync(join(root, 'etc/svc/node.yaml')));
  t.true(existsSync(join(root, 'var/lib/svc-node/state-file')));

  writeFileSync(join(root, 'etc/svc/node.kubeconfig'), 'written by TLS bootstrap\n');
  writeFileSync(join(root, 'var/lib/svc-node/keep-on-purge'), '');
  writeFileSync(join(root, 'var/lib/svc-apiserver/state.db'), 'db');
  const r = await dpkgPurge(root, 'svc');
  t.regex(r.stderr, /keeping .*\/var\/lib\/svc-node as asked/);
  t.is(dpkgStatus(root, 'svc'), undefined);
  t.is(readFileSync(join(root, 'var/lib/svc-node/state-file'), 'utf8'), 'state', 'the agent state is kept');
  t.false(existsSync(join(root, 'etc/svc')), 'configuration, kubeconfigs and drop-ins are gone');
  t.false(existsSync(join(root, 'etc/default/svc-node')));
  t.false(existsSync(join(root, 'var/lib/svc-apiserver')), 'the API server store is gone (it had no keep-on-purge)');
  t.false(existsSync(join(root, 'etc/systemd/system/multi-user.target.wants/svc-apiserver.service')), 'enablement symlinks are gone');
  t.false(existsSync(join(root, 'var/lib/systemd/deb-systemd-helper-enabled/svc-node.service.dsh-also')));
});

test.serial('purging a used installation leaves nothing behind but the system user', async (t) => {
  const fresh = makeScratchRoot(work);
  await dpkgInstall(fresh, deb);
  // What running it leaves: the agent's state, pod logs, a kubeconfig from TLS bootstrap, the API server's store.
  mkdirSync(join(fresh, 'var/lib/svc-node/pki'), { mode: 0o700 });
  writeFileSync(join(fresh, 'var/lib/svc-node/pki/svc-node-client-current.pem'), 'cert');
  mkdirSync(join(fresh, 'var/log/pods/default_p_uid/c'), { recursive: true });
  writeFileSync(join(fresh, 'var/log/pods/default_p_uid/c/0.log'), 'log');
  writeFileSync(join(fresh, 'etc/svc/node.kubeconfig'), 'kubeconfig');
  mkdirSync(join(fresh, 'var/lib/svc-apiserver/store'));
  writeFileSync(join(fresh, 'var/lib/svc-apiserver/store/state.db'), 'db');
  mkdirSync(join(fresh, 'run'));
  writeFileSync(join(fresh, 'run/svc-node.lock'), '');
  await dpkgPurge(fresh, 'svc');
  const left = [...listTree(fresh, (rel) => rel.startsWith('var/lib/dpkg/')).entries()];
  // sysusers' account files (the user stays, as Debian does for system users) and the empty
  // directories every systemd machine has.
  const allowedFiles = ['etc/passwd', 'etc/group', 'etc/shadow', 'etc/gshadow', 'etc/.pwd.lock'];
  const allowedDirs = ['etc', 'etc/systemd', 'etc/systemd/system', 'var', 'var/lib', 'var/lib/dpkg', 'var/lib/systemd', 'var/log', 'run'];
  t.deepEqual(left.filter(([p, e]) => (e.type === 'dir' ? !allowedDirs.includes(p) : !allowedFiles.includes(p))).map(([p]) => p), []);
  t.regex(readFileSync(join(fresh, 'etc/passwd'), 'utf8'), /^svc-apiserver:/m);
});
