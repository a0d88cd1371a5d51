/**
 * Adversarial probe (issue 16, defect 2 and 6): watchers that stop reading, then disconnect or
 * stay connected, while large objects are written. Every watch must end with its connection and
 * release what it holds, the watch cache's history must stay within --watch-cache-max-bytes, the
 * heap must come back after a forced GC, and SIGTERM must not wait for stalled peers beyond the
 * shutdown delay plus a bound.
 *
 * The watchers are raw TLS clients (node:tls) that pause their socket once the response headers
 * arrived: the kernel's receive and send buffers fill (a few MB), then the server's own write
 * buffer. Node cannot shrink a TCP socket's kernel buffer, so the volume written (20 × 900 KB per
 * watcher) is what makes sure the server sees the stall.
 *
 * Heap is read through the inspector (--inspect on 127.0.0.1, port chosen by the system):
 * HeapProfiler.collectGarbage, then process.memoryUsage() in the server, so the figure is what is
 * retained, not garbage not yet collected.
 */
import test from 'ava';
import { connect, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request, WebSocket } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';

const MAX_BYTES = 8 * 1024 * 1024;
const SHUTDOWN_DELAY_S = 1;
const BIG = 'x'.repeat(900 * 1024);
const CMS = '/api/v1/namespaces/default/configmaps';

/** One document of the server's /metrics: the value of the series with exactly these labels (0 when absent). */
async function metric(s: RunningApiServer, name: string, labels = ''): Promise<number> {
  const r = await request(`${s.url}/metrics`, { dispatcher: s.admin });
  const text = await r.body.text();
  const series = `${name}${labels ? `{${labels}}` : ''} `;
  const line = text.split('\n').find((l) => l.startsWith(series));
  return line ? Number(line.slice(series.length)) : 0;
}

const watchers = (s: RunningApiServer) => metric(s, 'apiserver_registered_watchers', 'group="",resource="configmaps"');

/** Polls until cond(value) holds (at most `tries` reads, 100 ms apart); returns the last value read. */
async function until(read: () => Promise<number>, cond: (v: number) => boolean, tries = 200): Promise<number> {
  let v = await read();
  for (let i = 0; i < tries && !cond(v); i++) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  return v;
}

/** A watch over raw TLS that stops reading as soon as its response headers arrived. */
async function stalledWatch(s: RunningApiServer): Promise<TLSSocket> {
  const pki = join(s.dataDir, 'pki');
  const sock = connect({
    host: '127.0.0.1',
    port: s.port,
    servername: 'localhost',
    ca: s.caPem,
    cert: readFileSync(join(pki, 'admin.crt')),
    key: readFileSync(join(pki, 'admin.key')),
  });
  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    sock.once('secureConnect', () => {
      sock.write(`GET ${CMS}?watch=1 HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\r\n`);
    });
    let head = '';
    const onData = (d: Buffer) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      sock.off('data', onData);
      sock.pause();
      if (head.startsWith('HTTP/1.1 200')) resolve();
      else reject(new Error(`watch refused: ${head.slice(0, 200)}`));
    };
    sock.on('data', onData);
  });
  sock.on('error', () => undefined); // reset when the server cuts it
  return sock;
}

/** The server's heap after a full GC, through the inspector. */
async function heapAfterGc(s: RunningApiServer): Promise<number> {
  const m = /Debugger listening on (ws:\/\/\S+)/.exec(s.output());
  if (!m) throw new Error(`no inspector URL in the output:\n${s.output()}`);
  const ws = new WebSocket(m[1]);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new Error('inspector connection failed')), { once: true });
  });
  let id = 0;
  type Reply = { id?: number; result?: { result?: { value?: unknown } } };
  const send = (method: string, params: object = {}) =>
    new Promise<Reply>((resolve) => {
      const my = ++id;
      const onMessage = (e: { data: unknown }) => {
        const msg = JSON.parse(String(e.data)) as Reply;
        if (msg.id !== my) return;
        ws.removeEventListener('message', onMessage);
        resolve(msg);
      };
      ws.addEventListener('message', onMessage);
      ws.send(JSON.stringify({ id: my, method, params }));
    });
  try {
    await send('HeapProfiler.collectGarbage');
    await send('HeapProfiler.collectGarbage');
    const r = await send('Runtime.evaluate', { expression: 'process.memoryUsage().heapUsed', returnByValue: true });
    return Number(r.result?.result?.value);
  } finally {
    ws.close();
  }
}

async function put(s: RunningApiServer, name: string, data: string, create: boolean): Promise<void> {
  const r = await request(`${s.url}${CMS}${create ? '' : `/${name}`}`, {
    method: create ? 'POST' : 'PUT',
    dispatcher: s.admin,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: data } }),
  });
  const text = await r.body.text();
  if (r.statusCode >= 300) throw new Error(`${create ? 'create' : 'update'} ${name}: ${r.statusCode} ${text.slice(0, 300)}`);
}

test('watchers that stop reading and disconnect are released, history stays bounded, heap returns, SIGTERM exits', async (t) => {
  t.timeout(180_000);
  const s = await startApiServer({
    args: [`--watch-cache-max-bytes=${MAX_BYTES}`, `--shutdown-delay-duration=${SHUTDOWN_DELAY_S}s`],
    env: { NODE_OPTIONS: '--inspect=127.0.0.1:0' },
  });
  let exited = false;
  s.proc.once('exit', () => (exited = true));
  try {
    // Two large ConfigMaps exist before the baseline: what the informers legitimately hold.
    await put(s, 'big-0', BIG, true);
    await put(s, 'big-1', BIG, true);
    const baseWatchers = await watchers(s);
    const baseHeap = await heapAfterGc(s);

    const stalled = await Promise.all(Array.from({ length: 5 }, () => stalledWatch(s)));
    t.is(await until(() => watchers(s), (v) => v === baseWatchers + 5), baseWatchers + 5, 'the five watches are registered');
    for (let i = 0; i < 20; i++) await put(s, `big-${i % 2}`, BIG.slice(0, -2) + String(i).padStart(2, '0'), false);
    const history = await metric(s, 'apiserver_watch_cache_history_bytes');
    t.true(history <= MAX_BYTES, `history holds ${history} bytes, bound ${MAX_BYTES}`);

    for (const w of stalled) w.destroy();
    t.is(await until(() => watchers(s), (v) => v === baseWatchers), baseWatchers, 'every closed watch is released');
    const heap = await heapAfterGc(s);
    t.log(`heap after GC: baseline ${(baseHeap / 1e6).toFixed(1)} MB, after ${(heap / 1e6).toFixed(1)} MB; history ${(history / 1e6).toFixed(1)} MB; dropped watchers ${await metric(s, 'apiserver_terminated_watchers_total', 'group="",resource="configmaps"')}`);
    // Back to the baseline plus at most the bounded history (and a margin for V8's own bookkeeping).
    t.true(heap - baseHeap < MAX_BYTES + 16 * 1024 * 1024, `heap after GC ${(heap / 1e6).toFixed(1)} MB, baseline ${(baseHeap / 1e6).toFixed(1)} MB`);

    // Two more stall and stay connected: SIGTERM must still exit, within the delay plus a bound.
    const held = await Promise.all([stalledWatch(s), stalledWatch(s)]);
    for (let i = 0; i < 6; i++) await put(s, `big-${i % 2}`, BIG.slice(0, -2) + String(50 + i), false);
    s.proc.kill('SIGTERM');
    const signalled = Date.now();
    const limit = (SHUTDOWN_DELAY_S + 10) * 1000;
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(-1), limit);
      s.proc.once('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
      if (exited) {
        clearTimeout(timer);
        resolve(s.proc.exitCode);
      }
    });
    t.log(`exit ${code} ${Date.now() - signalled} ms after SIGTERM (shutdown delay ${SHUTDOWN_DELAY_S} s)`);
    t.is(code, 0, `svc-apiserver should exit 0 within ${limit} ms of SIGTERM with stalled watchers connected`);
    for (const w of held) w.destroy();
  } finally {
    if (s.proc.exitCode === null) s.proc.kill('SIGKILL');
    await s.stop();
  }
});
