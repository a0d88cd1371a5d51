/**
 * Starts Debian's containerd as this test's own child process, with everything under a temp
 * folder: config (version 2, CRI plugin), root and state dirs, socket, runc state, CNI config and
 * IPAM data, pod logs. The busybox-static image built by test/fixtures/images/build-busybox.sh is
 * imported into the k8s.io namespace and doubles as the sandbox ("pause") image.
 *
 * Settings this machine needs (see issue 4, "Real peers"): restrict_oom_score_adj = true (no
 * CAP_SYS_RESOURCE: without it RunPodSandbox fails "can't get final child's PID from pipe"),
 * cgroupfs driver (SystemdCgroup = false; systemd is not PID 1), no registry access.
 *
 * stop() removes every sandbox through CRI (so CNI tears the network down), kills what is left
 * (tasks, shims started for our socket, processes in our cgroup parent), unmounts what is mounted
 * under the temp folder, removes the cgroup parent, the bridge and the folder. leftovers() lists
 * anything still there, so tests can assert a clean machine.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, readlink, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { GrpcRuntimeService } from '../../agent/cri/grpc-client';

const run = promisify(execFile);

export const CONTAINERD_BIN = '/usr/bin/containerd';
export const CTR_BIN = '/usr/bin/ctr';
export const RUNC_BIN = '/usr/sbin/runc';
export const CNI_BIN_DIR = '/usr/lib/cni';
/** The image every test container (and the sandbox) runs; its default command is `sleep infinity`. */
export const BUSYBOX_IMAGE = 'svc.local/busybox:latest';

export interface ContainerdOptions {
  /** Write a bridge + host-local CNI config (default true); false leaves NetworkReady=false. */
  cni?: boolean;
  /** How long to wait for the socket to answer (default 30 s). */
  startTimeoutMs?: number;
  /**
   * Runs the daemon in this named network namespace (/run/netns/<netns>, made by the test):
   * `nsenter --net`, so only the network namespace changes (mounts stay the host's, as `ip netns
   * exec`'s fresh /sys would hide the cgroup filesystem from runc). Its pods' networks live there.
   */
  netns?: string;
}

export interface Containerd {
  /** unix:///<root>/containerd.sock: containerRuntimeEndpoint and imageServiceEndpoint. */
  endpoint: string;
  socket: string;
  /** The temp folder holding all of this instance's files. */
  root: string;
  /** Where pod log directories should go (sandbox logDirectory). */
  logRoot: string;
  /** Imported image reference (also the sandbox image). */
  image: string;
  /** cgroup parent for sandboxes ("/svc-e2e-<hex>"), removed by stop(). */
  cgroupParent: string;
  /** The CNI bridge's subnet. */
  podCidr: string;
  /** The CNI bridge interface. */
  bridge: string;
  /** The CNI config directory containerd reads (conf_dir). */
  cniConfDir: string;
  /** containerd's pid (of the current daemon, after a restart the new one). */
  readonly pid: number;
  /**
   * Kills the daemon alone (SIGKILL, as a crash): shims and containers stay, as they do when a
   * real containerd dies. Resolves once it has exited.
   */
  killDaemon(): Promise<void>;
  /** Starts the daemon again with the same config and state; resolves once CRI answers. */
  restartDaemon(): Promise<void>;
  /** Runs ctr against this instance in the k8s.io namespace; resolves stdout. */
  ctr(...args: string[]): Promise<string>;
  /** Things this instance left on the machine (processes, mounts, cgroups, links, netns); [] when clean. */
  leftovers(): Promise<string[]>;
  /** Tears everything down. Idempotent; never rejects (problems are in leftovers()). */
  stop(): Promise<void>;
}

/** Fails with a message naming what to install when a needed binary is missing (tests must not skip silently). */
export function requireContainerdTools(): void {
  if (process.getuid?.() !== 0) throw new Error('containerd e2e must run as root (it mounts, creates cgroups and network devices)');
  const missing = [
    [CONTAINERD_BIN, 'containerd'],
    [CTR_BIN, 'containerd'],
    [RUNC_BIN, 'runc'],
    [path.join(CNI_BIN_DIR, 'bridge'), 'containernetworking-plugins'],
    ['/bin/busybox', 'busybox-static'],
  ].filter(([file]) => !existsSync(file));
  if (missing.length > 0) {
    throw new Error(`containerd e2e needs: ${missing.map(([f, pkg]) => `${f} (apt-get install ${pkg})`).join(', ')}`);
  }
}

function findUp(rel: string, from = __dirname): string {
  let dir = from;
  for (;;) {
    const p = path.join(dir, rel);
    if (existsSync(p)) return p;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find ${rel} above ${from}`);
    dir = up;
  }
}

/** A /24 in 10.x.y.0 that no local address or route uses yet. */
async function freeSubnet(): Promise<string> {
  const { stdout } = await run('ip', ['-4', '-o', 'route', 'show', 'table', 'all']).catch(() => ({ stdout: '' }));
  for (let i = 0; i < 50; i++) {
    const [a, b] = randomBytes(2);
    const prefix = `10.${200 + ((a ?? 0) % 50)}.${b ?? 0}.`;
    if (!stdout.includes(prefix)) return `${prefix}0/24`;
  }
  throw new Error('no free 10.x.y.0/24 subnet for the test bridge');
}

function config(root: string, socket: string, cniConfDir: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${root}/lib"
state = "${root}/run"
oom_score = 0
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${socket}"

[ttrpc]
  address = "${socket}.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[${cri}]
  sandbox_image = "${BUSYBOX_IMAGE}"
  # No CAP_SYS_RESOURCE here: never lower oom_score_adj below containerd's own.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true
  max_concurrent_downloads = 1

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  BinaryName = "${RUNC_BIN}"
  Root = "${root}/runc"
  # cgroupfs: systemd is not PID 1 on these machines.
  SystemdCgroup = false

[${cri}.cni]
  bin_dir = "${CNI_BIN_DIR}"
  conf_dir = "${cniConfDir}"
  max_conf_num = 1
`;
}

function cniConfig(bridge: string, subnet: string, ipamDir: string): string {
  return JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: 'svc-e2e',
      plugins: [
        {
          type: 'bridge',
          bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet }]], dataDir: ipamDir, routes: [{ dst: '0.0.0.0/0' }] },
        },
      ],
    },
    null,
    2,
  );
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string, proc: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`containerd exited (${proc.exitCode ?? proc.signalCode}) before ${what}:\n${await tail(logFile)}`);
    }
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`containerd: ${what} not reached within ${timeoutMs} ms:\n${await tail(logFile)}`);
}

async function tail(file: string, lines = 30): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function pidsAll(): Promise<number[]> {
  return (await readdir('/proc')).filter((d) => /^\d+$/.test(d)).map(Number);
}

async function cmdline(pid: number): Promise<string[]> {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((s) => s !== '');
  } catch {
    return [];
  }
}

/** Shims containerd started for this socket (they outlive containerd by design). */
async function shimPids(socket: string): Promise<number[]> {
  const out: number[] = [];
  for (const pid of await pidsAll()) {
    const args = await cmdline(pid);
    if ((args[0] ?? '').includes('containerd-shim') && args.includes(socket)) out.push(pid);
  }
  return out;
}

/** Processes whose cgroup (any hierarchy) lies under the parent. */
async function pidsInCgroup(parent: string): Promise<number[]> {
  const out: number[] = [];
  for (const pid of await pidsAll()) {
    try {
      const cg = await readFile(`/proc/${pid}/cgroup`, 'utf8');
      if (cg.split('\n').some((l) => l.split(':')[2]?.startsWith(`${parent}/`) || l.split(':')[2] === parent)) out.push(pid);
    } catch {
      // gone
    }
  }
  return out;
}

/** Mount points at or below dir, deepest first. */
async function mountsUnder(dirs: string[]): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  const points = info
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .map((p) => p.replace(/\\040/g, ' '))
    .filter((p) => dirs.some((d) => p === d || p.startsWith(`${d}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** cgroup directories named by parent, in every mounted hierarchy, deepest first. */
async function cgroupDirs(parent: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    out.push(dir);
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) await walk(path.join(dir, e.name));
  };
  let hierarchies: string[];
  try {
    hierarchies = (await readdir('/sys/fs/cgroup')).map((h) => path.join('/sys/fs/cgroup', h));
  } catch {
    return [];
  }
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) hierarchies = ['/sys/fs/cgroup'];
  for (const h of hierarchies) {
    const d = path.join(h, parent);
    if (existsSync(d)) await walk(d);
  }
  return out.sort((a, b) => b.length - a.length);
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startContainerd(opts: ContainerdOptions = {}): Promise<Containerd> {
  requireContainerdTools();
  const root = await mkdtemp(path.join(tmpdir(), 'svc-ctrd-'));
  const socket = path.join(root, 'containerd.sock');
  const tag = randomBytes(4).toString('hex');
  const bridge = `svcbr${tag}`;
  const cgroupParent = `/svc-e2e-${tag}`;
  const cniDir = path.join(root, 'cni');
  const logRoot = path.join(root, 'pods');
  const logFile = path.join(root, 'containerd.log');
  const podCidr = await freeSubnet();
  await mkdir(cniDir, { recursive: true });
  await mkdir(logRoot, { recursive: true });
  await writeFile(path.join(root, 'config.toml'), config(root, socket, cniDir));
  if (opts.cni !== false) await writeFile(path.join(cniDir, '10-svc-e2e.conflist'), cniConfig(bridge, podCidr, path.join(root, 'ipam')));

  const spawnDaemon = (): ChildProcess => {
    const out = openSync(logFile, 'a');
    const argv = [CONTAINERD_BIN, '--config', path.join(root, 'config.toml'), '--log-level', 'info'];
    if (opts.netns) argv.unshift('/usr/bin/nsenter', `--net=/run/netns/${opts.netns}`, '--');
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ['ignore', out, out],
      cwd: root,
    });
    closeSync(out);
    return child;
  };
  let proc = spawnDaemon();
  const netns = new Set<string>();

  const ctr = async (...args: string[]): Promise<string> => {
    const { stdout } = await run(CTR_BIN, ['--address', socket, '--namespace', 'k8s.io', ...args], { maxBuffer: 16 << 20 });
    return stdout;
  };
  /** Whether the daemon answers ctr version (it is up and serving). */
  const answersCtr = () => ctr('version').then(() => true, () => false);

  let stopping: Promise<void> | undefined;
  const handle: Containerd = {
    endpoint: `unix://${socket}`,
    socket,
    root,
    logRoot,
    image: BUSYBOX_IMAGE,
    cgroupParent,
    podCidr,
    bridge,
    cniConfDir: cniDir,
    get pid() {
      return proc.pid ?? 0;
    },
    ctr,
    async killDaemon() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGKILL');
      await exited;
    },
    async restartDaemon() {
      if (proc.exitCode === null && proc.signalCode === null) throw new Error('containerd is still running');
      proc = spawnDaemon();
      const timeoutMs = opts.startTimeoutMs ?? 30_000;
      await waitFor(
        answersCtr,
        timeoutMs,
        'an answer to ctr version after the restart',
        proc,
        logFile,
      );
    },
    async leftovers() {
      const found: string[] = [];
      if (alive(proc.pid ?? 0) && proc.exitCode === null && proc.signalCode === null) found.push(`containerd pid ${proc.pid}`);
      for (const p of await shimPids(socket)) found.push(`shim pid ${p}: ${(await cmdline(p)).join(' ')}`);
      for (const p of await pidsInCgroup(cgroupParent)) found.push(`pid ${p} in cgroup ${cgroupParent}: ${(await cmdline(p)).join(' ')}`);
      for (const m of await mountsUnder([root, ...netns])) found.push(`mount ${m}`);
      for (const d of await cgroupDirs(cgroupParent)) found.push(`cgroup ${d}`);
      if (existsSync(`/sys/class/net/${bridge}`)) found.push(`link ${bridge}`);
      for (const n of netns) if (existsSync(n)) found.push(`netns ${n}`);
      if (existsSync(root)) found.push(`dir ${root}`);
      return found;
    },
    stop() {
      stopping ??= teardown();
      return stopping;
    },
  };

  const teardown = async (): Promise<void> => {
    // 1. Through CRI, so CNI DEL runs and the runtime forgets everything.
    if (proc.exitCode === null && existsSync(socket)) {
      const cri = new GrpcRuntimeService(handle.endpoint, handle.endpoint, { timeoutMs: 30_000 });
      try {
        for (const s of await cri.listPodSandbox()) {
          try {
            const st = await cri.podSandboxStatus(s.id, true);
            const info = JSON.parse(st.info['info'] ?? '{}') as { runtimeSpec?: { linux?: { namespaces?: { type: string; path?: string }[] } } };
            for (const ns of info.runtimeSpec?.linux?.namespaces ?? []) if (ns.type === 'network' && ns.path) netns.add(ns.path);
          } catch {
            // best effort
          }
          await cri.stopPodSandbox(s.id).catch(() => undefined);
          await cri.removePodSandbox(s.id).catch(() => undefined);
        }
        for (const c of await cri.listContainers()) await cri.removeContainer(c.id).catch(() => undefined);
      } catch {
        // containerd is not answering; the kills below still clean up
      } finally {
        cri.close();
      }
      // 2. Anything created outside CRI.
      try {
        for (const id of (await ctr('tasks', 'ls', '-q')).split('\n').filter(Boolean)) {
          await ctr('tasks', 'kill', '-s', 'SIGKILL', id).catch(() => undefined);
          await ctr('tasks', 'delete', '-f', id).catch(() => undefined);
        }
        for (const id of (await ctr('containers', 'ls', '-q')).split('\n').filter(Boolean)) await ctr('containers', 'rm', id).catch(() => undefined);
      } catch {
        // as above
      }
    }
    // 3. containerd itself.
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      kill(proc.pid ?? 0, 'SIGTERM');
      const timer = setTimeout(() => kill(proc.pid ?? 0, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    // 4. Shims and container processes that survived.
    for (const p of [...(await shimPids(socket)), ...(await pidsInCgroup(cgroupParent))]) kill(p, 'SIGKILL');
    for (let i = 0; i < 100 && ((await shimPids(socket)).length > 0 || (await pidsInCgroup(cgroupParent)).length > 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    // 5. Mounts (rootfs overlays, shm, netns bind mounts), deepest first.
    for (const m of await mountsUnder([root, ...netns])) {
      await run('umount', [m]).catch(() => run('umount', ['-l', m]).catch(() => undefined));
    }
    for (const n of netns) await rm(n, { force: true }).catch(() => undefined);
    // 6. cgroups, the bridge, the folder.
    for (const d of await cgroupDirs(cgroupParent)) await rmdir(d).catch(() => undefined);
    if (existsSync(`/sys/class/net/${bridge}`)) await run('ip', ['link', 'del', bridge]).catch(() => undefined);
    await rm(root, { recursive: true, force: true }).catch(() => undefined);
  };

  try {
    const timeoutMs = opts.startTimeoutMs ?? 30_000;
    await waitFor(() => existsSync(socket), timeoutMs, 'its socket', proc, logFile);
    await waitFor(
      answersCtr,
      timeoutMs,
      'an answer to ctr version',
      proc,
      logFile,
    );
    const archive = path.join(root, 'busybox.oci.tar');
    await run(findUp(path.join('test', 'fixtures', 'images', 'build-busybox.sh')), [archive, BUSYBOX_IMAGE]);
    await ctr('images', 'import', archive);
    // The CRI plugin learns about imported images through events; wait until it sees it.
    const cri = new GrpcRuntimeService(handle.endpoint);
    try {
      await waitFor(
        async () => (await cri.imageStatus({ image: BUSYBOX_IMAGE }).catch(() => ({ image: undefined }))).image !== undefined,
        timeoutMs,
        `CRI to list ${BUSYBOX_IMAGE}`,
        proc,
        logFile,
      );
    } finally {
      cri.close();
    }
  } catch (e) {
    await handle.stop();
    throw e;
  }
  return handle;
}

/** Readlink helper for tests that check a container's namespaces. */
export async function namespaceOf(pid: number, ns: 'net' | 'pid' | 'uts' | 'ipc'): Promise<string> {
  return readlink(`/proc/${pid}/ns/${ns}`);
}
