/**
 * The agent's streaming endpoints end to end, with real processes: a real svc-apiserver (static
 * tokens, RBAC) and a real svc-node on the CRI simulator, called directly over TLS as the API
 * server would (the proxy through the API server is tested with it). exec over WebSocket v5 and
 * v4 and over SPDY/3.1 (exit codes, stdin round trip, tty resize, the container's files),
 * port-forward over SPDY, over the WebSocket SPDY tunnel and over WebSocket v4, 401/403 for
 * callers without nodes/proxy, the connection cap (429), the idle timeout, and teardown: a client
 * that vanishes mid-stream leaves no runtime stream open.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { adminDispatcher, runPod, startNode, type NodeUnderTest } from '../checkpoint/checkpoint-env';
import { eventually } from '../agent/agent-process';
import { rawWsConnect, readAll, readUntil, spdyUpgrade, wsCollect, wsConnect, type Refusal, type Target } from '../../helpers/stream-client';
import { parseExitStatus } from '../../../common/stream/remotecommand';
import { SpdySession } from '../../../common/stream/spdy-connection';
import { tarArchive } from '../../../agent/cri/sim-tar';
import { untar } from '../../../agent/cri/sim-tar-command';
import { createWebSocketStream } from 'ws';

const NODE = 'e2e-streams';
const TOKENS = { streamer: 'streamer-token-0123456789', nobody: 'nobody-token-0123456789' } as const;
const MAX = 4;

interface Env {
  api: RunningApiServer;
  dir: string;
  node: NodeUnderTest;
  admin: { cert: Buffer; key: Buffer };
}
let env: Env | undefined;
function e(): Env {
  if (!env) throw new Error('the environment did not start (see the before hook)');
  return env;
}

async function grantProxy(api: RunningApiServer, user: string): Promise<void> {
  const role = { apiVersion: 'rbac.authorization.svc.io/v1', kind: 'ClusterRole', metadata: { name: `e2e-${user}` }, rules: [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get', 'create'] }] };
  const binding = {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `e2e-${user}` },
    roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: `e2e-${user}` },
    subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: user }],
  };
  for (const [resource, obj] of [['clusterroles', role], ['clusterrolebindings', binding]] as const) {
    const res = await request(`${api.url}/apis/rbac.authorization.svc.io/v1/${resource}`, { method: 'POST', dispatcher: api.admin, headers: { 'content-type': 'application/json' }, body: JSON.stringify(obj) });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`creating ${resource}: ${res.statusCode} ${text}`);
  }
}

test.before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-streams-e2e-'));
  const tokens = path.join(dir, 'tokens.csv');
  writeFileSync(tokens, Object.entries(TOKENS).map(([user, token]) => `${token},${user},uid-${user}`).join('\n') + '\n');
  const api = await startApiServer({ args: [`--token-auth-file=${tokens}`] });
  let node: NodeUnderTest | undefined;
  try {
    await grantProxy(api, 'streamer');
    node = await startNode(api, path.join(dir, 'node'), NODE, [`maxStreamingConnections: ${MAX}`, 'streamingConnectionIdleTimeout: 8s']);
    await runPod(api, NODE, 'web', 'svc.local/busybox:latest', {});
    const admin = { cert: readFileSync(path.join(api.dataDir, 'pki', 'admin.crt')), key: readFileSync(path.join(api.dataDir, 'pki', 'admin.key')) };
    env = { api, dir, node, admin };
  } catch (err) {
    await node?.agent.stop('SIGKILL');
    await api.stop();
    throw err;
  }
});

test.after.always(async () => {
  if (!env) return;
  await env.node.agent.stop('SIGKILL');
  await env.api.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

const asStreamer = (p: string): Target => ({ port: e().node.port, path: p, headers: { Authorization: `Bearer ${TOKENS.streamer}` } });
const execPath = (cmd: string[], q: string): string => `/exec/default/web/app?${cmd.map((c) => `command=${encodeURIComponent(c)}`).join('&')}&${q}`;

function isRefusal(x: object): x is Refusal {
  return 'status' in x;
}

/** The agent's stream gauges from /metrics (as system:masters). */
async function gauges(): Promise<{ connections: number; runtime: number }> {
  const d = adminDispatcher(e().api);
  try {
    const res = await request(`https://127.0.0.1:${e().node.port}/metrics`, { dispatcher: d });
    const text = await res.body.text();
    const read = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
    return { connections: read('svc_node_streaming_connections'), runtime: read('svc_node_runtime_streams') };
  } finally {
    await d.close();
  }
}

async function openSpdyStreams(session: SpdySession, kinds: string[]): Promise<Record<string, Awaited<ReturnType<SpdySession['openStream']>>>> {
  const out: Record<string, Awaited<ReturnType<SpdySession['openStream']>>> = {};
  // As client-go: the error stream first, then the others.
  for (const k of kinds) out[k] = await session.openStream({ streamtype: k });
  return out;
}

test.serial('exec over WebSocket v5: stdout and stderr on their channels, the exit code in a NonZeroExitCode Status', async (t) => {
  const c = await wsConnect(asStreamer(execPath(['sh', '-c', 'echo out; cat /nope; exit 3'], 'stdout=1&stderr=1')), ['v5.channel.k8s.io', 'v4.channel.k8s.io']);
  if (isRefusal(c)) return t.fail(`refused: ${c.status} ${c.body}`);
  t.is(c.protocol, 'v5.channel.k8s.io');
  const { channels } = await wsCollect(c.ws);
  t.is(channels.get(1)?.toString(), 'out\n');
  t.is(channels.get(2)?.toString(), 'cat: /nope: No such file or directory\n');
  const status = JSON.parse(channels.get(3)!.toString()) as { reason: string; details: { causes: { reason: string; message: string }[] } };
  t.is(status.reason, 'NonZeroExitCode');
  t.deepEqual(status.details.causes, [{ reason: 'ExitCode', message: '3' }]);
  t.deepEqual(parseExitStatus(channels.get(3)!), { exitCode: 3 });
});

test.serial('exec over WebSocket v5: stdin round trip ended by the close signal, the container\'s mounted files readable, Success status', async (t) => {
  const c = await wsConnect(asStreamer(execPath(['cat'], 'stdin=1&stdout=1')), ['v5.channel.k8s.io']);
  if (isRefusal(c)) return t.fail(`refused: ${c.status} ${c.body}`);
  const done = wsCollect(c.ws);
  c.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('round trip\n')]));
  c.ws.send(Buffer.from([255, 0]));
  const { channels } = await done;
  t.is(channels.get(1)?.toString(), 'round trip\n');
  t.deepEqual(parseExitStatus(channels.get(3)!), { exitCode: 0 });
  const f = await wsConnect(asStreamer(execPath(['cat', '/var/run/secrets/kubernetes.io/serviceaccount/namespace'], 'stdout=1')), ['v4.channel.k8s.io']);
  if (isRefusal(f)) return t.fail(`refused: ${f.status} ${f.body}`);
  t.is(f.protocol, 'v4.channel.k8s.io');
  t.is((await wsCollect(f.ws)).channels.get(1)?.toString(), 'default');
});

test.serial('kubectl cp\'s tar over WebSocket v5: an archive streamed in with tar xf (stdin ended by the close signal) is read back with tar cf', async (t) => {
  const into = await wsConnect(asStreamer(execPath(['tar', '--no-same-permissions', '--no-same-owner', '-xmf', '-', '-C', '/tmp'], 'stdin=1&stdout=1&stderr=1')), ['v5.channel.k8s.io']);
  if (isRefusal(into)) return t.fail(`refused: ${into.status} ${into.body}`);
  const loaded = wsCollect(into.ws);
  into.ws.send(Buffer.concat([Buffer.from([0]), tarArchive([{ name: 'notes.txt', data: 'copied with kubectl cp', mtime: 0 }])]));
  into.ws.send(Buffer.from([255, 0]));
  t.deepEqual(parseExitStatus((await loaded).channels.get(3)!), { exitCode: 0 });
  const out = await wsConnect(asStreamer(execPath(['tar', 'cf', '-', '/tmp/notes.txt'], 'stdout=1&stderr=1')), ['v5.channel.k8s.io']);
  if (isRefusal(out)) return t.fail(`refused: ${out.status} ${out.body}`);
  const { channels } = await wsCollect(out.ws);
  t.deepEqual(untar(channels.get(1)!).map((f) => [f.name, f.data.toString()]), [['tmp/notes.txt', 'copied with kubectl cp']]);
});

test.serial('attach over WebSocket v5: the simulator\'s main process echoes stdin until the client closes it', async (t) => {
  const c = await wsConnect(asStreamer('/attach/default/web/app?stdin=1&stdout=1'), ['v5.channel.k8s.io']);
  if (isRefusal(c)) return t.fail(`refused: ${c.status} ${c.body}`);
  const done = wsCollect(c.ws);
  c.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('attached\n')]));
  c.ws.send(Buffer.from([255, 0]));
  const { channels } = await done;
  t.is(channels.get(1)?.toString(), 'attached\n');
  t.deepEqual(parseExitStatus(channels.get(3)!), { exitCode: 0 });
});

test.serial('exec over SPDY/3.1 (v4.channel.k8s.io): stdin round trip, stdout, and the exit status on the error stream', async (t) => {
  const up = await spdyUpgrade(asStreamer(execPath(['sh', '-c', 'cat; exit 7'], 'stdin=1&stdout=1&stderr=1')), ['v4.channel.k8s.io', 'v3.channel.k8s.io']);
  if (isRefusal(up)) return t.fail(`refused: ${up.status} ${up.body}`);
  t.is(up.protocol, 'v4.channel.k8s.io');
  const s = await openSpdyStreams(up.session, ['error', 'stdin', 'stdout', 'stderr']);
  const out = readAll(s.stdout);
  const err = readAll(s.error);
  s.stdin.end('hello over spdy');
  t.is(await out, 'hello over spdy');
  t.deepEqual(parseExitStatus(await err), { exitCode: 7 });
  up.session.destroy();
});

test.serial('exec with a tty over SPDY: the resize stream\'s sizes reach the container (stty size)', async (t) => {
  const up = await spdyUpgrade(asStreamer(execPath(['sh'], 'stdin=1&stdout=1&tty=1')), ['v4.channel.k8s.io']);
  if (isRefusal(up)) return t.fail(`refused: ${up.status} ${up.body}`);
  const s = await openSpdyStreams(up.session, ['error', 'stdin', 'stdout', 'resize']);
  s.resize.write(JSON.stringify({ Width: 132, Height: 43 }));
  // The resize and stdin streams are independent: wait until the size has been taken.
  let seen = '';
  s.stdout.on('data', (b: Buffer) => (seen += b.toString()));
  await eventually('the resize applied', async () => {
    s.stdin.write('stty size\n');
    await new Promise((r) => setTimeout(r, 100));
    return seen.includes('43 132') ? true : undefined;
  }, 20_000, 100);
  const err = readAll(s.error);
  s.stdin.end('exit 0\n');
  t.deepEqual(parseExitStatus(await err), { exitCode: 0 });
  up.session.destroy();
});

test.serial('port-forward over SPDY (portforward.k8s.io): data both ways on a data/error stream pair', async (t) => {
  const up = await spdyUpgrade(asStreamer('/portForward/default/web'), ['portforward.k8s.io']);
  if (isRefusal(up)) return t.fail(`refused: ${up.status} ${up.body}`);
  t.is(up.protocol, 'portforward.k8s.io');
  const error = await up.session.openStream({ streamtype: 'error', port: '8080', requestid: '0' });
  const data = await up.session.openStream({ streamtype: 'data', port: '8080', requestid: '0' });
  const back = readAll(data);
  // More than the 64 KiB windows both ways, so neither side may stall on the other.
  const big = 'x'.repeat(300 * 1024);
  data.end(big);
  t.is((await back).length, big.length);
  t.is(await readAll(error), '');
  up.session.destroy();
});

test.serial('port-forward over WebSocket: the SPDY tunnel kubectl 1.31+ uses, and v4 channels with the port prefix', async (t) => {
  const tunnel = await rawWsConnect(asStreamer('/portForward/default/web'), 'SPDY/3.1+portforward.k8s.io');
  if (isRefusal(tunnel)) return t.fail(`refused: ${tunnel.status} ${tunnel.body}`);
  t.is(tunnel.protocol, 'SPDY/3.1+portforward.k8s.io');
  const session = new SpdySession(createWebSocketStream(tunnel.ws), { server: false });
  await session.openStream({ streamtype: 'error', port: '80', requestid: '1' });
  const data = await session.openStream({ streamtype: 'data', port: '80', requestid: '1' });
  const back = readUntil(data, 'tunnelled');
  data.write('tunnelled');
  t.is(await back, 'tunnelled');
  session.destroy();

  const v4 = await wsConnect(asStreamer('/portForward/default/web?ports=8080'), ['v4.channel.k8s.io']);
  if (isRefusal(v4)) return t.fail(`refused: ${v4.status} ${v4.body}`);
  const frames: Buffer[] = [];
  const echoed = new Promise<void>((resolve) => v4.ws.on('message', (m: Buffer) => {
    frames.push(m);
    if (Buffer.concat(frames.filter((f) => f[0] === 0).map((f) => f.subarray(1))).includes('abc')) resolve();
  }));
  v4.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('abc')]));
  await echoed;
  // The first message of the data and error channels is the port, little endian.
  t.deepEqual([...frames.find((f) => f[0] === 0)!], [0, 0x90, 0x1f]);
  t.deepEqual([...frames.find((f) => f[0] === 1)!], [1, 0x90, 0x1f]);
  v4.ws.close();
});

test.serial('401 without credentials, 403 without nodes/proxy, 404 for an unknown pod or a stale UID, on both upgrades', async (t) => {
  const p = execPath(['true'], 'stdout=1');
  const anon = await spdyUpgrade({ port: e().node.port, path: p }, ['v4.channel.k8s.io']);
  t.true(isRefusal(anon) && anon.status === 401);
  const nobody = { port: e().node.port, path: p, headers: { Authorization: `Bearer ${TOKENS.nobody}` } };
  const spdy = await spdyUpgrade(nobody, ['v4.channel.k8s.io']);
  t.true(isRefusal(spdy) && spdy.status === 403);
  if (isRefusal(spdy)) t.like(JSON.parse(spdy.body), { kind: 'Status', reason: 'Forbidden', message: 'Forbidden (user=nobody, verb=get, resource=nodes, subresource=proxy)' });
  const ws = await wsConnect(nobody, ['v5.channel.k8s.io']);
  t.true(isRefusal(ws) && ws.status === 403);
  const missing = await wsConnect(asStreamer('/exec/default/ghost/app?command=true&stdout=1'), ['v5.channel.k8s.io']);
  t.true(isRefusal(missing) && missing.status === 404);
  const stale = await wsConnect(asStreamer('/exec/default/web/0000-stale-uid/app?command=true&stdout=1'), ['v5.channel.k8s.io']);
  t.true(isRefusal(stale) && stale.status === 404);
});

test.serial('POST /run answers the command\'s output', async (t) => {
  const res = await request(`https://127.0.0.1:${e().node.port}/run/default/web/app`, {
    method: 'POST',
    dispatcher: adminDispatcher(e().api),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'cmd=echo+ran+here',
  });
  t.is(res.statusCode, 200);
  t.is(await res.body.text(), 'ran here\n');
});

test.serial('teardown: clients that vanish mid-stream (SPDY and WebSocket) leave no runtime stream open; the cap answers 429', async (t) => {
  // What the earlier tests opened has all been released (their clients closed or finished).
  await eventually('the earlier tests\' connections released', async () => {
    const g = await gauges();
    return g.connections === 0 && g.runtime === 0 ? true : undefined;
  }, 20_000, 100);
  const before = await gauges();
  const up = await spdyUpgrade(asStreamer(execPath(['cat'], 'stdin=1&stdout=1')), ['v4.channel.k8s.io']);
  if (isRefusal(up)) return t.fail(`refused: ${up.status} ${up.body}`);
  const s = await openSpdyStreams(up.session, ['error', 'stdin', 'stdout']);
  const echoed = readUntil(s.stdout, 'mid');
  s.stdin.write('mid');
  await echoed;
  const ws = await wsConnect(asStreamer(execPath(['sleep', '3600'], 'stdout=1')), ['v5.channel.k8s.io']);
  if (isRefusal(ws)) return t.fail(`refused: ${ws.status} ${ws.body}`);
  const pf = await spdyUpgrade(asStreamer('/portForward/default/web'), ['portforward.k8s.io']);
  if (isRefusal(pf)) return t.fail(`refused: ${pf.status} ${pf.body}`);
  await pf.session.openStream({ streamtype: 'error', port: '80', requestid: '9' });
  const data = await pf.session.openStream({ streamtype: 'data', port: '80', requestid: '9' });
  const pfEcho = readUntil(data, 'pf');
  data.write('pf');
  await pfEcho;
  await eventually('three connections and three runtime streams', async () => {
    const g = await gauges();
    return g.connections === before.connections + 3 && g.runtime === before.runtime + 3 ? true : undefined;
  }, 20_000, 100);
  // One more reaches the cap of 4; the fifth is refused with 429.
  const fourth = await wsConnect(asStreamer(execPath(['sleep', '3600'], 'stdout=1')), ['v5.channel.k8s.io']);
  if (isRefusal(fourth)) return t.fail(`refused: ${fourth.status} ${fourth.body}`);
  const fifth = await wsConnect(asStreamer(execPath(['true'], 'stdout=1')), ['v5.channel.k8s.io']);
  t.true(isRefusal(fifth) && fifth.status === 429);
  if (isRefusal(fifth)) t.like(JSON.parse(fifth.body), { kind: 'Status', reason: 'TooManyRequests' });
  // Every client vanishes without closing anything.
  up.socket.destroy();
  ws.ws.terminate();
  pf.socket.destroy();
  fourth.ws.terminate();
  await eventually('no connection and no runtime stream left', async () => {
    const g = await gauges();
    return g.connections === 0 && g.runtime === 0 ? true : undefined;
  }, 20_000, 100);
  t.deepEqual(await gauges(), { connections: 0, runtime: 0 });
});

test.serial('a connection idle for streamingConnectionIdleTimeout is closed with its runtime stream', async (t) => {
  const c = await wsConnect(asStreamer(execPath(['sleep', '3600'], 'stdout=1')), ['v5.channel.k8s.io']);
  if (isRefusal(c)) return t.fail(`refused: ${c.status} ${c.body}`);
  const closed = new Promise<number>((resolve) => c.ws.once('close', (code) => resolve(code)));
  // Bounded by the test's timeout; the idle timeout is 8 s.
  t.is(await closed, 1006);
  await eventually('the runtime stream released', async () => ((await gauges()).runtime === 0 ? true : undefined), 20_000, 100);
  t.is((await gauges()).runtime, 0);
});
