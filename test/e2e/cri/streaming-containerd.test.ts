/**
 * The stream protocols against a Go peer: real containerd (Debian's 1.6), whose CRI stream server
 * is k8s.io/kubelet's (moby/spdystream for SPDY, wsstream for WebSocket). Our SPDY client (framing,
 * header compression under the draft's dictionary) and WebSocket channel codec talk to it for
 * exec, directly and through the agent's upgrade forwarding (agent/server/stream-proxy.ts, what
 * svc-node does for a real runtime), and a client that vanishes leaves no exec behind.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import test from 'ava';
import { GrpcRuntimeService } from '../../../agent/cri/grpc-client';
import type { ContainerConfig, PodSandboxConfig } from '../../../agent/cri/types';
import { proxyUpgrade } from '../../../agent/server/stream-proxy';
import { parseExitStatus } from '../../../common/stream/remotecommand';
import { startContainerd, type Containerd } from '../../helpers/containerd';
import { readAll, spdyUpgrade, wsCollect, wsConnect, type Refusal, type Target } from '../../helpers/stream-client';

let ctrd: Containerd | undefined;
let cri: GrpcRuntimeService | undefined;
let containerId = '';

function env(): { ctrd: Containerd; cri: GrpcRuntimeService } {
  if (!ctrd || !cri) throw new Error('containerd did not start (see the before hook)');
  return { ctrd, cri };
}

test.before(async () => {
  ctrd = await startContainerd();
  cri = new GrpcRuntimeService(ctrd.endpoint, ctrd.endpoint, { timeoutMs: 30_000 });
  const uid = 'uid-streams';
  const sb: PodSandboxConfig = {
    metadata: { name: 'streams', namespace: 'e2e', uid, attempt: 0 },
    hostname: 'streams',
    logDirectory: path.join(ctrd.logRoot, `e2e_streams_${uid}`),
    labels: { 'io.kubernetes.pod.name': 'streams', 'io.kubernetes.pod.namespace': 'e2e' },
    linux: { cgroupParent: `${ctrd.cgroupParent}/pod${uid}`, securityContext: { namespaceOptions: {} } },
  };
  const sandboxId = await cri.runPodSandbox(sb);
  const c: ContainerConfig = {
    metadata: { name: 'app', attempt: 0 },
    image: { image: ctrd.image },
    command: ['sleep', '3600'],
    logPath: 'app/0.log',
    labels: { 'io.kubernetes.container.name': 'app' },
    linux: { securityContext: { namespaceOptions: { pid: 'CONTAINER' } } },
  };
  containerId = await cri.createContainer(sandboxId, c, sb);
  await cri.startContainer(containerId);
});

test.after.always(async () => {
  cri?.close();
  await ctrd?.stop();
});

function isRefusal(x: object): x is Refusal {
  return 'status' in x;
}

/** The runtime's stream URL as a plain-TCP target. */
function target(url: string): Target {
  const u = new URL(url);
  return { plain: true, host: u.hostname, port: Number(u.port), path: u.pathname + u.search };
}

async function execOverSpdy(t: Target): Promise<{ out: string; err: string; status: string }> {
  const up = await spdyUpgrade(t, ['v4.channel.k8s.io', 'v3.channel.k8s.io']);
  if (isRefusal(up)) throw new Error(`refused: ${up.status} ${up.body}`);
  if (up.protocol !== 'v4.channel.k8s.io') throw new Error(`protocol ${up.protocol}`);
  const error = await up.session.openStream({ streamtype: 'error' });
  const stdin = await up.session.openStream({ streamtype: 'stdin' });
  const stdout = await up.session.openStream({ streamtype: 'stdout' });
  const stderr = await up.session.openStream({ streamtype: 'stderr' });
  const [out, err, status] = [readAll(stdout), readAll(stderr), readAll(error)];
  // Several header blocks in one zlib context each way, then data larger than a frame.
  stdin.end('x'.repeat(100_000) + 'END');
  const result = { out: await out, err: await err, status: await status };
  up.session.destroy();
  return result;
}

test.serial('exec over SPDY/3.1 against containerd\'s stream server: stdin, stdout, stderr and the exit status', async (t) => {
  const { cri } = env();
  const url = await cri.exec({ containerId, cmd: ['sh', '-c', 'cat; echo oops >&2; exit 5'], tty: false, stdin: true, stdout: true, stderr: true });
  const r = await execOverSpdy(target(url));
  t.is(r.out.length, 100_003);
  t.true(r.out.endsWith('END'));
  t.is(r.err, 'oops\n');
  t.deepEqual(parseExitStatus(r.status), { exitCode: 5 });
});

test.serial('exec through the agent\'s upgrade forwarding (SPDY and WebSocket v4) reaches containerd unchanged', async (t) => {
  const { cri } = env();
  // A stand-in for the agent's server: every upgrade is forwarded to the URL the runtime answered.
  let next = '';
  let forwarded = 0;
  const server: Server = createServer();
  server.on('upgrade', (req, socket, head) => {
    forwarded++;
    void proxyUpgrade(req, socket, head, next, () => () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    next = await cri.exec({ containerId, cmd: ['sh', '-c', 'cat; echo oops >&2; exit 5'], tty: false, stdin: true, stdout: true, stderr: true });
    const r = await execOverSpdy({ plain: true, port, path: new URL(next).pathname });
    t.true(r.out.endsWith('END'));
    t.deepEqual(parseExitStatus(r.status), { exitCode: 5 });

    next = await cri.exec({ containerId, cmd: ['sh', '-c', 'echo via websocket; exit 2'], tty: false, stdin: false, stdout: true, stderr: true });
    const ws = await wsConnect({ plain: true, port, path: new URL(next).pathname + '?' }, ['v4.channel.k8s.io']);
    if (isRefusal(ws)) return t.fail(`refused: ${ws.status} ${ws.body}`);
    const { channels } = await wsCollect(ws.ws);
    t.is(channels.get(1)?.toString(), 'via websocket\n');
    t.deepEqual(parseExitStatus(channels.get(3)!), { exitCode: 2 });
    t.is(forwarded, 2);
  } finally {
    server.close();
  }
});

test.serial('a client that vanishes mid-exec: containerd closes the exec\'s input with it (its cat ends)', async (t) => {
  const { cri } = env();
  const url = await cri.exec({ containerId, cmd: ['sh', '-c', 'cat; sleep 3600'], tty: false, stdin: true, stdout: true, stderr: false });
  const up = await spdyUpgrade(target(url), ['v4.channel.k8s.io']);
  if (isRefusal(up)) return t.fail(`refused: ${up.status} ${up.body}`);
  await up.session.openStream({ streamtype: 'error' });
  const stdin = await up.session.openStream({ streamtype: 'stdin' });
  await up.session.openStream({ streamtype: 'stdout' });
  stdin.write('x');
  const running = async (): Promise<boolean> => (await cri.execSync(containerId, ['sh', '-c', 'ps | grep -c "[c]at$" || true'], 10)).stdout.toString().trim() !== '0';
  for (let i = 0; i < 100 && !(await running()); i++) await new Promise((r) => setTimeout(r, 100));
  t.true(await running());
  up.socket.destroy();
  // containerd closes the exec's stdin when its client goes: cat ends, then sleep runs on; what
  // must not remain is the stream itself (its cat): the exec's input is gone with the client.
  for (let i = 0; i < 100 && (await running()); i++) await new Promise((r) => setTimeout(r, 100));
  t.false(await running());
});
