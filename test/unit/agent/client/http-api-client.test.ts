import test from 'ava';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { createCA, issue, type KeyPairPem } from '../../../../apiserver/pki/certs';
import { ClientError, GoneError } from '../../../../agent/client/client-error';
import { HttpApiClient } from '../../../../agent/client/http-api-client';
import { csrResource, leasesResource, nodesResource } from '../../../../agent/client/resources';
import { freePort } from '../../../helpers/free-port';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  cn: string | undefined;
}

type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

let ca: KeyPairPem;
let serving: KeyPairPem;
let nodeA: KeyPairPem;
let nodeB: KeyPairPem;

test.before(async () => {
  ca = await createCA('test-ca');
  serving = await issue(ca, { commonName: 'server', ips: ['127.0.0.1'], dnsNames: ['localhost'], usage: 'server', validityMs: 3600_000 });
  nodeA = await issue(ca, { commonName: 'system:node:a', organizations: ['system:nodes'], usage: 'client', validityMs: 3600_000 });
  nodeB = await issue(ca, { commonName: 'system:node:b', organizations: ['system:nodes'], usage: 'client', validityMs: 3600_000 });
});

async function serve(handler: Handler): Promise<{ server: Server; url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer({ key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body, cn: peer && peer.subject ? (peer.subject.CN as string) : undefined };
      seen.push(s);
      handler(req, res, s);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    url: `https://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const json = (res: ServerResponse, code: number, body: unknown) => {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

test('requests carry the client certificate, JSON headers and the right paths and verbs', async (t) => {
  const s = await serve((req, res, seen) => json(res, req.method === 'POST' ? 201 : 200, { metadata: { name: 'a', resourceVersion: '5' }, echo: seen.url }));
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem, certPem: nodeA.certPem, keyPem: nodeA.keyPem }, { userAgent: 'svc-node/v0.1.0' });
  try {
    const got = await c.get(nodesResource, 'a', { resourceVersion: '0' });
    t.is(got['echo'], '/api/v1/nodes/a?resourceVersion=0');
    await c.create(nodesResource, { metadata: { name: 'a' } });
    await c.update(leasesResource, { metadata: { name: 'a', namespace: 'svc-node-lease', resourceVersion: '5' } });
    await c.patch(nodesResource, 'a', 'strategic', { status: {} }, { subresource: 'status' });
    await c.patch(nodesResource, 'a', 'merge', { metadata: {} });
    await c.patch(nodesResource, 'a', 'json', []);
    await c.list(csrResource, { fieldSelector: 'metadata.name=x', limit: 5 });
    t.deepEqual(
      s.seen.map((x) => `${x.method} ${x.url} ${x.headers['content-type'] ?? ''}`),
      [
        'GET /api/v1/nodes/a?resourceVersion=0 ',
        'POST /api/v1/nodes application/json',
        'PUT /apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/a application/json',
        'PATCH /api/v1/nodes/a/status application/strategic-merge-patch+json',
        'PATCH /api/v1/nodes/a application/merge-patch+json',
        'PATCH /api/v1/nodes/a application/json-patch+json',
        'GET /apis/certificates.svc.io/v1/certificatesigningrequests?fieldSelector=metadata.name%3Dx&limit=5 ',
      ],
    );
    t.true(s.seen.every((x) => x.cn === 'system:node:a'));
    t.true(s.seen.every((x) => x.headers['user-agent'] === 'svc-node/v0.1.0' && x.headers['accept'] === 'application/json'));
    t.deepEqual(JSON.parse(s.seen[1].body), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'a' } });
    t.is(JSON.parse(s.seen[2].body).kind, 'Lease');
  } finally {
    await c.close();
    await s.close();
  }
});

test('a token user sends a bearer token and no client certificate', async (t) => {
  const s = await serve((_req, res) => json(res, 200, { metadata: {} }));
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem, token: 'abcdef.0123456789abcdef' });
  try {
    await c.get(nodesResource, 'a');
    t.is(s.seen[0].headers['authorization'], 'Bearer abcdef.0123456789abcdef');
    t.is(s.seen[0].cn, undefined);
  } finally {
    await c.close();
    await s.close();
  }
});

test('error answers become ClientError with the Status reason and message', async (t) => {
  const s = await serve((req, res) => {
    if (req.url!.includes('missing')) json(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', message: 'nodes "missing" not found', code: 404 });
    else if (req.url!.includes('gone')) json(res, 410, { kind: 'Status', reason: 'Expired', message: 'too old', code: 410 });
    else {
      res.writeHead(502);
      res.end('bad gateway');
    }
  });
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem });
  try {
    const nf = await t.throwsAsync(c.get(nodesResource, 'missing'), { instanceOf: ClientError });
    t.is(nf.status, 404);
    t.is(nf.reason, 'NotFound');
    t.is(nf.message, 'nodes "missing" not found');
    await t.throwsAsync(c.get(nodesResource, 'gone'), { instanceOf: GoneError });
    const bad = await t.throwsAsync(c.get(nodesResource, 'x'), { instanceOf: ClientError });
    t.is(bad.status, 502);
    t.is(bad.message, 'bad gateway');
  } finally {
    await c.close();
    await s.close();
  }
});

test('an unreachable server and a silent one fail fast with code 0', async (t) => {
  const port = await freePort();
  const refused = new HttpApiClient({ server: `https://127.0.0.1:${port}`, caPem: ca.certPem });
  const e = await t.throwsAsync(refused.get(nodesResource, 'a'), { instanceOf: ClientError });
  t.is(e.status, 0);
  t.is(e.reason, 'ConnectionFailed');
  t.regex(e.message, /ECONNREFUSED/);
  await refused.close();

  const s = await serve(() => undefined); // never answers
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem }, { timeoutMs: 300 });
  try {
    const te = await t.throwsAsync(c.get(nodesResource, 'a'), { instanceOf: ClientError });
    t.is(te.status, 0);
    t.is(te.reason, 'Timeout');
  } finally {
    await c.close();
    await s.close();
  }
});

test('an aborted request rejects with AbortError', async (t) => {
  const s = await serve(() => undefined);
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem });
  try {
    const ac = new AbortController();
    const p = c.get(nodesResource, 'a', { signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await t.throwsAsync(p, { name: 'AbortError' });
  } finally {
    await c.close();
    await s.close();
  }
});

test('redial drops a hung connection so the next request gets through', async (t) => {
  let hang = true;
  const s = await serve((_req, res) => {
    if (!hang) json(res, 200, { metadata: { name: 'ok' } });
  });
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem }, { timeoutMs: 30_000 });
  try {
    const stuck = c.get(nodesResource, 'a');
    while (s.seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    hang = false;
    await c.redial();
    const e = await t.throwsAsync(stuck, { instanceOf: ClientError });
    t.is(e.status, 0);
    t.is((await c.get(nodesResource, 'a')).metadata.name, 'ok');
  } finally {
    await c.close();
    await s.close();
  }
});

test('useClientCertificate swaps the identity for new connections', async (t) => {
  const s = await serve((_req, res) => json(res, 200, { metadata: {} }));
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem, certPem: nodeA.certPem, keyPem: nodeA.keyPem });
  try {
    await c.get(nodesResource, 'a');
    c.useClientCertificate(nodeB.certPem, nodeB.keyPem);
    await c.get(nodesResource, 'a');
    t.deepEqual(s.seen.map((x) => x.cn), ['system:node:a', 'system:node:b']);
  } finally {
    await c.close();
    await s.close();
  }
});

test('watch parses events from awkward chunks, passes the query, and ends when the server ends', async (t) => {
  const events = [
    { type: 'ADDED', object: { metadata: { name: 'x', resourceVersion: '7' }, note: 'braces } in strings {' } },
    { type: 'BOOKMARK', object: { metadata: { resourceVersion: '8' } } },
    { type: 'MODIFIED', object: { metadata: { name: 'x', resourceVersion: '9' } } },
  ];
  const s = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const text = events.map((e) => JSON.stringify(e) + '\n').join('');
    let i = 0;
    const step = () => {
      if (i >= text.length) {
        res.end();
        return;
      }
      res.write(text.slice(i, i + 13));
      i += 13;
      setImmediate(step);
    };
    step();
  });
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem });
  try {
    const got = [];
    for await (const ev of c.watch(csrResource, { fieldSelector: 'metadata.name=x', resourceVersion: '6', allowWatchBookmarks: true, timeoutSeconds: 30 })) got.push(ev);
    t.deepEqual(got, events);
    t.is(s.seen[0].url, '/apis/certificates.svc.io/v1/certificatesigningrequests?watch=1&fieldSelector=metadata.name%3Dx&resourceVersion=6&allowWatchBookmarks=true&timeoutSeconds=30');
  } finally {
    await c.close();
    await s.close();
  }
});

test('a 410 ERROR event or a 410 answer surfaces as GoneError', async (t) => {
  const s = await serve((req, res) => {
    if (req.url!.includes('resourceVersion=1&')) return json(res, 410, { kind: 'Status', reason: 'Expired', message: 'too old resource version: 1', code: 410 });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '3' } } }) + '\n');
    res.end(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', status: 'Failure', reason: 'Expired', message: 'too old resource version: 2 (50)', code: 410 } }) + '\n');
  });
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem });
  try {
    const seen: string[] = [];
    const e = await t.throwsAsync(
      (async () => {
        for await (const ev of c.watch(nodesResource, { resourceVersion: '2', timeoutSeconds: 5 })) seen.push(ev.object.metadata.name!);
      })(),
      { instanceOf: GoneError },
    );
    t.deepEqual(seen, ['a']);
    t.is(e.message, 'too old resource version: 2 (50)');
    await t.throwsAsync(
      (async () => {
        for await (const _ of c.watch(nodesResource, { resourceVersion: '1', timeoutSeconds: 5 })) t.fail();
      })(),
      { instanceOf: GoneError },
    );
  } finally {
    await c.close();
    await s.close();
  }
});

test('breaking out of a watch or aborting it closes the stream', async (t) => {
  let closed = 0;
  const s = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } }) + '\n');
    res.on('close', () => closed++);
  });
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem });
  try {
    for await (const ev of c.watch(nodesResource)) {
      t.is(ev.object.metadata.name, 'a');
      break;
    }
    const ac = new AbortController();
    const got: string[] = [];
    const run = (async () => {
      for await (const ev of c.watch(nodesResource, { signal: ac.signal })) {
        got.push(ev.object.metadata.name!);
        ac.abort();
      }
    })();
    await run; // ends normally, no error
    t.deepEqual(got, ['a']);
    while (closed < 2) await new Promise((r) => setTimeout(r, 5));
    t.is(closed, 2);
  } finally {
    await c.close();
    await s.close();
  }
});

test('requests of every verb reuse one kept-alive connection', async (t) => {
  const s = await serve((req, res) => (req.method === 'DELETE' ? json(res, 200, { kind: 'Status', status: 'Success' }) : json(res, 200, { metadata: { name: 'x' } })));
  let handshakes = 0;
  s.server.on('secureConnection', () => handshakes++);
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem, certPem: nodeA.certPem, keyPem: nodeA.keyPem });
  try {
    for (let i = 0; i < 5; i++) {
      await c.get(nodesResource, 'a');
      await c.patch(nodesResource, 'a', 'merge', { metadata: { labels: { i: String(i) } } });
      await c.delete(leasesResource, 'a', { namespace: 'svc-node-lease' });
      await c.create(leasesResource, { metadata: { name: 'a', namespace: 'svc-node-lease' } });
    }
    t.is(s.seen.length, 20);
    t.is(handshakes, 1);
  } finally {
    await c.close();
    await s.close();
  }
});

test('a watch whose answer does not come in time fails with Timeout', async (t) => {
  const s = await serve(() => undefined); // never answers
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem }, { watchHeadersTimeoutMs: 200 });
  try {
    const e = await t.throwsAsync(
      (async () => {
        for await (const _ of c.watch(nodesResource)) t.fail('no event was sent');
      })(),
      { instanceOf: ClientError },
    );
    t.is(e.status, 0);
    t.is(e.reason, 'Timeout');
  } finally {
    await c.close();
    await s.close();
  }
});

test('every request and watch start waits for the limiter', async (t) => {
  const s = await serve((req, res) => {
    if (req.url?.includes('watch=1')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'w' } } }) + '\n');
    } else json(res, 200, { metadata: { name: 'x' } });
  });
  const gates: Array<() => void> = [];
  const limiter = { wait: () => new Promise<void>((r) => gates.push(r)) };
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem }, { limiter });
  try {
    const get = c.get(nodesResource, 'a');
    const watched = (async () => {
      const names: string[] = [];
      for await (const ev of c.watch(nodesResource)) names.push(ev.object.metadata.name!);
      return names;
    })();
    while (gates.length < 2) await new Promise((r) => setTimeout(r, 5));
    t.is(s.seen.length, 0, 'nothing is sent while the limiter holds the requests');
    for (const g of gates) g();
    t.is((await get).metadata.name, 'x');
    t.deepEqual(await watched, ['w']);
    t.is(s.seen.length, 2);
  } finally {
    await c.close();
    await s.close();
  }
});

test('open watches do not take the connections requests need (each informer holds one for its whole life)', async (t) => {
  const s = await serve((req, res) => {
    if (req.url!.includes('watch=1')) {
      // A watch that stays open with nothing to say.
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      res.write('');
      return;
    }
    json(res, 200, { metadata: { name: 'x', resourceVersion: '1' } });
  });
  const c = new HttpApiClient({ server: s.url, caPem: ca.certPem }, { connections: 2 });
  const ac = new AbortController();
  try {
    const watches = Array.from({ length: 6 }, async () => {
      for await (const _ev of c.watch(csrResource, { timeoutSeconds: 300, signal: ac.signal }));
    });
    // Every watch reaches the server (bounded: with a shared pool only two ever would).
    const opened = () => s.seen.filter((x) => x.url.includes('watch=1')).length;
    for (let i = 0; i < 500 && opened() < 6; i++) await new Promise((r) => setTimeout(r, 10));
    t.is(opened(), 6);
    const got = await c.get(csrResource, 'x');
    t.is(got.metadata.name, 'x');
    ac.abort();
    await Promise.allSettled(watches);
  } finally {
    await c.close();
    await s.close();
  }
});
