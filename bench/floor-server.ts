/**
 * The floor server: a trivial in-memory HTTPS server answering the same requests as the API
 * server's hot paths (create, get, list, watch), with nothing else (no schema, no store, no
 * admission). What it costs to serve is what TLS, HTTP and JSON alone cost on this machine, so
 * it is the floor the API server's figures are compared with. Run as its own process (so it does
 * not share the load generator's event loop):
 *
 *   node floor-server.js --cert=<pem file> --key=<pem file> --client-ca=<pem file> [--port=0]
 *
 * It prints "listening <port>" on stdout once it accepts connections and exits on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';

const MAX_BODY = 3 * 1024 * 1024;

/** Objects by collection path (e.g. /api/v1/namespaces/a/configmaps) then name, kept as their JSON text. */
const collections = new Map<string, Map<string, string>>();
/** Open watch streams by collection path. */
const watchers = new Map<string, Set<ServerResponse>>();
let revision = 0;

function flag(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

function required(name: string): string {
  const v = flag(name);
  if (!v) {
    process.stderr.write(`floor-server: --${name} is required\n`);
    process.exit(2);
  }
  return v;
}

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function json(res: ServerResponse, code: number, body: string): void {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** POST to a collection: store the object with the next resourceVersion, answer 201 with it, fan it out to the collection's watchers. */
function create(req: IncomingMessage, res: ServerResponse, path: string): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= MAX_BODY) chunks.push(c);
  });
  req.on('end', () => {
    if (size > MAX_BODY) return status(res, 413, 'RequestEntityTooLarge', 'body too large');
    let obj: { metadata?: { name?: unknown; resourceVersion?: string } };
    try {
      obj = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof obj;
    } catch {
      return status(res, 400, 'BadRequest', 'malformed JSON');
    }
    const name = obj?.metadata?.name;
    if (typeof name !== 'string' || name === '') return status(res, 422, 'Invalid', 'metadata.name: Required value');
    let items = collections.get(path);
    if (!items) collections.set(path, (items = new Map<string, string>()));
    if (items.has(name)) return status(res, 409, 'AlreadyExists', `${name} already exists`);
    obj.metadata!.resourceVersion = String(++revision);
    const text = JSON.stringify(obj);
    items.set(name, text);
    const line = `{"type":"ADDED","object":${text}}\n`;
    for (const w of watchers.get(path) ?? []) w.write(line);
    json(res, 201, text);
  });
}

/** GET with watch=1: a chunked stream that starts with a BOOKMARK line, then one line per write. */
function watch(res: ServerResponse, path: string): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  let set = watchers.get(path);
  if (!set) watchers.set(path, (set = new Set()));
  set.add(res);
  res.write(`{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"${revision}"}}}\n`);
  res.on('close', () => set.delete(res));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q >= 0 ? url.slice(0, q) : url;
  const query = new URLSearchParams(q >= 0 ? url.slice(q + 1) : '');
  if (path === '/readyz' || path === '/livez' || path === '/healthz') {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('ok');
    return;
  }
  if (req.method === 'POST') return create(req, res, path);
  if (req.method !== 'GET') return status(res, 405, 'MethodNotAllowed', `${req.method} is not supported`);
  const w = query.get('watch');
  if (w === '1' || w === 'true') return watch(res, path);
  const slash = path.lastIndexOf('/');
  const item = collections.get(path.slice(0, slash))?.get(path.slice(slash + 1));
  if (item !== undefined) return json(res, 200, item);
  const items = collections.get(path);
  if (items) {
    return json(res, 200, `{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"${revision}"},"items":[${[...items.values()].join(',')}]}`);
  }
  status(res, 404, 'NotFound', `${path} not found`);
}

function main(): void {
  const server = createServer(
    {
      cert: readFileSync(required('cert'), 'utf8'),
      key: readFileSync(required('key'), 'utf8'),
      ca: readFileSync(required('client-ca'), 'utf8'),
      // The same TLS posture as the API server: client certificates requested, not required.
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    },
    handle,
  );
  server.keepAliveTimeout = 65_000;
  server.listen(Number(flag('port') ?? 0), flag('bind-address') ?? '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
  });
  const stop = () => {
    for (const set of watchers.values()) for (const w of set) w.destroy();
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) main();
