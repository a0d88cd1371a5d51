/**
 * svc-node's streaming endpoints on real containerd: exec over SPDY/3.1 and WebSocket v4 reaches
 * the container through the agent (authenticated as system:masters with the API server's admin
 * certificate), which forwards a SPDY upgrade to containerd's stream URL and joins WebSocket
 * clients (v5 with stdin's close signal; the port-forward tunnel of kubectl 1.31+) to it over
 * SPDY; a client that vanishes leaves neither a connection nor a runtime stream on the agent.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { request } from 'undici';
import { parseExitStatus } from '../../../common/stream/remotecommand';
import { startContainerdNode, type ContainerdNode } from '../../helpers/containerd-node';
import { freePort } from '../../helpers/free-port';
import { rawWsConnect, readAll, readUntil, spdyUpgrade, wsCollect, wsConnect, type Refusal, type Target } from '../../helpers/stream-client';
import { SpdySession } from '../../../common/stream/spdy-connection';
import { createWebSocketStream } from 'ws';
import { eventually } from '../agent/agent-process';
import { adminDispatcher, runPod } from '../checkpoint/checkpoint-env';

const NODE = 'e2e-streams-ctrd';
let node: ContainerdNode | undefined;
let port = 0;

function n(): ContainerdNode {
  if (!node) throw new Error('the node did not start (see the before hook)');
  return node;
}

test.before(async () => {
  port = await freePort();
  node = await startContainerdNode({ nodeName: NODE, args: ['--node-ip=127.0.0.1'], configLines: ['address: 127.0.0.1', `port: ${port}`, 'nodeStatusUpdateFrequency: 1s'] });
  await runPod(node.api, NODE, 'web', node.ctrd.image);
});

test.after.always(async () => {
  await node?.stop();
});

function isRefusal(x: object): x is Refusal {
  return 'status' in x;
}

function asAdmin(p: string): Target {
  const pki = path.join(n().api.dataDir, 'pki');
  return { port, path: p, tls: { cert: readFileSync(path.join(pki, 'admin.crt')), key: readFileSync(path.join(pki, 'admin.key')) } };
}

async function gauges(): Promise<{ connections: number; runtime: number }> {
  const d = adminDispatcher(n().api);
  try {
    const text = await (await request(`https://127.0.0.1:${port}/metrics`, { dispatcher: d })).body.text();
    const read = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');
    return { connections: read('svc_node_streaming_connections'), runtime: read('svc_node_runtime_streams') };
  } finally {
    await d.close();
  }
}

test.serial('exec through svc-node to containerd: SPDY with stdin and the exit code, WebSocket v4', async (t) => {
  const up = await spdyUpgrade(asAdmin('/exec/default/web/app?command=sh&command=-c&command=cat%3B%20exit%204&stdin=1&stdout=1&stderr=1'), ['v4.channel.k8s.io']);
  if (isRefusal(up)) return t.fail(`refused: ${up.status} ${up.body}`);
  const error = await up.session.openStream({ streamtype: 'error' });
  const stdin = await up.session.openStream({ streamtype: 'stdin' });
  const stdout = await up.session.openStream({ streamtype: 'stdout' });
  await up.session.openStream({ streamtype: 'stderr' });
  const out = readAll(stdout);
  const status = readAll(error);
  stdin.end('through the agent');
  t.is(await out, 'through the agent');
  t.deepEqual(parseExitStatus(await status), { exitCode: 4 });
  up.session.destroy();

  const ws = await wsConnect(asAdmin('/exec/default/web/app?command=hostname&stdout=1'), ['v4.channel.k8s.io']);
  if (isRefusal(ws)) return t.fail(`refused: ${ws.status} ${ws.body}`);
  const { channels } = await wsCollect(ws.ws);
  t.is(channels.get(1)?.toString(), 'web\n');
  t.deepEqual(parseExitStatus(channels.get(3)!), { exitCode: 0 });
});

test.serial('a client vanishing mid-exec leaves no connection and no runtime stream on the agent', async (t) => {
  const up = await spdyUpgrade(asAdmin('/exec/default/web/app?command=cat&stdin=1&stdout=1'), ['v4.channel.k8s.io']);
  if (isRefusal(up)) return t.fail(`refused: ${up.status} ${up.body}`);
  await up.session.openStream({ streamtype: 'error' });
  const stdin = await up.session.openStream({ streamtype: 'stdin' });
  const stdout = await up.session.openStream({ streamtype: 'stdout' });
  const echoed = readUntil(stdout, 'mid');
  stdin.write('mid');
  await echoed;
  t.deepEqual(await gauges(), { connections: 1, runtime: 1 });
  up.socket.destroy();
  await eventually('the agent released the streams', async () => {
    const g = await gauges();
    return g.connections === 0 && g.runtime === 0 ? true : undefined;
  }, 30_000, 100);
  t.deepEqual(await gauges(), { connections: 0, runtime: 0 });
});

test.serial('WebSocket v5 through svc-node to containerd (which serves no v5): stdin ended by the close signal, exit status', async (t) => {
  const c = await wsConnect(asAdmin('/exec/default/web/app?command=sh&command=-c&command=cat%3B%20exit%206&stdin=1&stdout=1'), ['v5.channel.k8s.io']);
  if (isRefusal(c)) return t.fail(`refused: ${c.status} ${c.body}`);
  t.is(c.protocol, 'v5.channel.k8s.io');
  const done = wsCollect(c.ws);
  c.ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('tar bytes')]));
  c.ws.send(Buffer.from([255, 0]));
  const { channels } = await done;
  t.is(channels.get(1)?.toString(), 'tar bytes');
  t.deepEqual(parseExitStatus(channels.get(3)!), { exitCode: 6 });
});

test.serial('port-forward to a container\'s httpd: over SPDY (forwarded) and over the WebSocket tunnel (joined to containerd)', async (t) => {
  // busybox httpd daemonizes: the exec ends, the server stays in the container.
  const start = await wsConnect(asAdmin('/exec/default/web/app?command=httpd&command=-p&command=8080&command=-h&command=/etc&stdout=1&stderr=1'), ['v4.channel.k8s.io']);
  if (isRefusal(start)) return t.fail(`refused: ${start.status} ${start.body}`);
  t.deepEqual(parseExitStatus((await wsCollect(start.ws)).channels.get(3)!), { exitCode: 0 });
  const fetchHostname = async (session: SpdySession, id: string): Promise<string> => {
    await session.openStream({ streamtype: 'error', port: '8080', requestid: id });
    const data = await session.openStream({ streamtype: 'data', port: '8080', requestid: id });
    const body = readAll(data);
    data.write('GET /hostname HTTP/1.0\r\n\r\n');
    return body;
  };
  const up = await spdyUpgrade(asAdmin('/portForward/default/web'), ['portforward.k8s.io']);
  if (isRefusal(up)) return t.fail(`refused: ${up.status} ${up.body}`);
  t.regex(await fetchHostname(up.session, '0'), /200 OK[\s\S]*\r\n\r\nweb\n$/);
  up.session.destroy();
  const tunnel = await rawWsConnect(asAdmin('/portForward/default/web'), 'SPDY/3.1+portforward.k8s.io');
  if (isRefusal(tunnel)) return t.fail(`refused: ${tunnel.status} ${tunnel.body}`);
  const session = new SpdySession(createWebSocketStream(tunnel.ws), { server: false });
  t.regex(await fetchHostname(session, '1'), /\r\n\r\nweb\n$/);
  session.destroy();
  await eventually('the agent released the streams', async () => {
    const g = await gauges();
    return g.connections === 0 && g.runtime === 0 ? true : undefined;
  }, 30_000, 100);
  t.deepEqual(await gauges(), { connections: 0, runtime: 0 });
});
