import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { CheckpointHandler, type CheckpointHandlerOptions } from '../../../../agent/checkpoint/checkpoint-handler';
import { ContainerNotFoundError, type ContainerLocator } from '../../../../agent/checkpoint/container-locator';
import { RuntimeError } from '../../../../agent/cri/errors';
import type { Log } from '../../../../agent/platform/logger';
import { answer } from '../../../../agent/server/node-server';
import { tarOf } from './tar-fixture';

const quiet: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const NOW = Date.UTC(2026, 10, 22, 8, 0, 0);

const locator: ContainerLocator = {
  containerId(ns, pod, c) {
    if (ns === 'default' && pod === 'web' && c === 'app') return Promise.resolve('cid-1');
    if (ns === 'default' && pod === 'web2' && c === 'app') return Promise.resolve('cid-2');
    return Promise.reject(new ContainerNotFoundError(`pod ${ns}/${pod} container ${c} not found`));
  },
};

interface Call {
  id: string;
  location: string;
  timeout: number;
  timeoutMs: number | undefined;
}

type Writer = (location: string) => Promise<void>;

async function setup(t: { teardown(f: () => void): void }, write: Writer, over: Partial<CheckpointHandlerOptions> = {}) {
  const root = mkdtempSync(path.join(tmpdir(), 'svc-ckpt-'));
  const calls: Call[] = [];
  let gate = true;
  const h = new CheckpointHandler({
    enabled: () => gate,
    locator,
    runtime: {
      async checkpointContainer(id, location, timeout, opts) {
        calls.push({ id, location, timeout, timeoutMs: opts?.timeoutMs });
        await write(location);
      },
    },
    rootDir: root,
    now: () => NOW,
    log: quiet,
    ...over,
  });
  // Behind the agent server's error edge, which answers what the handler throws.
  const server: Server = createServer((req, res) => void answer(h.handle, req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => {
    server.close();
    rmSync(root, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = async (p: string, method = 'POST') => {
    const res = await fetch(url + p, { method });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { root, calls, post, setGate: (v: boolean) => (gate = v) };
}

const writeTar: Writer = async (location) => writeFileSync(location, await tarOf({ 'config.dump': '{"id":"cid-1"}', 'spec.dump': '{}' }), { mode: 0o644 });

test('200 with the archive path; dir 0700 and archive 0600; the runtime gets the id, location and timeout', async (t) => {
  const s = await setup(t, writeTar);
  const r = await s.post('/checkpoint/default/web/app?timeout=20');
  t.is(r.status, 200);
  const file = path.join(s.root, 'checkpoints', 'checkpoint-web_default-app-2026-11-22T08:00:00Z.tar');
  t.deepEqual(r.body, { items: [file] });
  t.deepEqual(s.calls, [{ id: 'cid-1', location: file, timeout: 20, timeoutMs: 30_000 }]);
  t.is(statSync(file).mode & 0o777, 0o600);
  t.is(statSync(path.join(s.root, 'checkpoints')).mode & 0o777, 0o700);
  const d = await s.post('/checkpoint/default/web2/app');
  t.is(d.status, 200);
  t.is(s.calls[1].timeout, 0);
  t.is(s.calls[1].timeoutMs, undefined, 'no timeout: the runtime client default applies');
});

test('an existing checkpoints directory with a loose mode is tightened to 0700', async (t) => {
  const s = await setup(t, writeTar);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(path.join(s.root, 'checkpoints'), { mode: 0o755 });
  t.is((await s.post('/checkpoint/default/web/app')).status, 200);
  t.is(statSync(path.join(s.root, 'checkpoints')).mode & 0o777, 0o700);
});

test('gate off is 404 without calling the runtime; other methods are 405', async (t) => {
  const s = await setup(t, writeTar);
  s.setGate(false);
  const r = await s.post('/checkpoint/default/web/app');
  t.is(r.status, 404);
  t.regex(String(r.body['message']), /ContainerCheckpoint/);
  s.setGate(true);
  t.is((await s.post('/checkpoint/default/web/app', 'GET')).status, 405);
  t.is(s.calls.length, 0);
});

test('unknown namespace, pod or container is 404', async (t) => {
  const s = await setup(t, writeTar);
  for (const p of ['/checkpoint/other/web/app', '/checkpoint/default/nope/app', '/checkpoint/default/web/nope']) {
    const r = await s.post(p);
    t.is(r.status, 404, p);
    t.like(r.body, { kind: 'Status', reason: 'NotFound', code: 404 });
  }
  t.is(s.calls.length, 0);
});

test('bad timeouts and hostile names are 400 and nothing is created on disk', async (t) => {
  const s = await setup(t, writeTar);
  for (const p of ['/checkpoint/default/web/app?timeout=-1', '/checkpoint/default/web/app?timeout=abc', '/checkpoint/default/web/app?timeout=1000000', '/checkpoint/default/web%00/app', '/checkpoint/default/a%2F..%2F..%2Fx/app', `/checkpoint/default/${'p'.repeat(300)}/app`]) {
    const r = await s.post(p);
    t.is(r.status, 400, p);
    t.like(r.body, { kind: 'Status', reason: 'BadRequest' });
  }
  t.regex(String((await s.post('/checkpoint/default/web/app?timeout=-5')).body['message']), /timeout/);
  t.false(existsSync(path.join(s.root, 'checkpoints')));
  t.is(s.calls.length, 0);
});

test('a runtime error is 500 with the runtime message, and a partial archive is removed', async (t) => {
  const s = await setup(t, (location) => {
    writeFileSync(location, 'partial');
    return Promise.reject(new RuntimeError('Unknown', 'write /x: no space left on device', 'CheckpointContainer'));
  });
  const r = await s.post('/checkpoint/default/web/app');
  t.is(r.status, 500);
  t.is(r.body['message'], 'write /x: no space left on device');
  t.deepEqual(readdirSync(path.join(s.root, 'checkpoints')), []);
});

test('Unimplemented (containerd 1.6) is 500 with the runtime message', async (t) => {
  const s = await setup(t, () => Promise.reject(new RuntimeError('Unimplemented', 'unknown method CheckpointContainer for service runtime.v1.RuntimeService', 'CheckpointContainer')));
  const r = await s.post('/checkpoint/default/web/app');
  t.is(r.status, 500);
  t.like(r.body, { reason: 'InternalError', message: 'unknown method CheckpointContainer for service runtime.v1.RuntimeService' });
});

test('an archive that is not a readable tar is 500 and removed; a missing archive is 500', async (t) => {
  const s = await setup(t, async (location) => writeFileSync(location, (await tarOf({ 'pages.img': 'x'.repeat(4000) })).subarray(0, 1500)));
  const r = await s.post('/checkpoint/default/web/app');
  t.is(r.status, 500);
  t.regex(String(r.body['message']), /not a readable tar/);
  t.deepEqual(readdirSync(path.join(s.root, 'checkpoints')), []);
  const s2 = await setup(t, () => Promise.resolve(undefined));
  const r2 = await s2.post('/checkpoint/default/web/app');
  t.is(r2.status, 500);
  t.regex(String(r2.body['message']), /wrote no archive/);
});

test('a concurrent checkpoint of the same container is 409; another container proceeds', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inRuntime = new Promise<void>((r) => (entered = r));
  const s = await setup(t, async (location) => {
    if (location.includes('web_default')) {
      entered();
      await gate;
    }
    await writeTar(location);
  });
  const first = s.post('/checkpoint/default/web/app');
  await inRuntime;
  const second = await s.post('/checkpoint/default/web/app');
  t.is(second.status, 409);
  t.like(second.body, { reason: 'Conflict' });
  t.is((await s.post('/checkpoint/default/web2/app')).status, 200);
  release();
  t.is((await first).status, 200);
  t.is((await s.post('/checkpoint/default/web/app')).status, 200, 'free again afterwards');
});

test('onCheckpointed hears each archive written and verified (the Checkpointed event), never a failed one', async (t) => {
  const heard: string[] = [];
  let fail = false;
  const s = await setup(
    t,
    async (location) => {
      if (fail) throw new RuntimeError('Unknown', 'boom', 'CheckpointContainer');
      await writeTar(location);
    },
    { onCheckpointed: (r, file) => heard.push(`${r.namespace}/${r.pod}/${r.container} ${path.basename(file)}`) },
  );
  t.is((await s.post('/checkpoint/default/web/app')).status, 200);
  fail = true;
  t.is((await s.post('/checkpoint/default/web2/app')).status, 500);
  t.deepEqual(heard, ['default/web/app checkpoint-web_default-app-2026-11-22T08:00:00Z.tar']);
});
