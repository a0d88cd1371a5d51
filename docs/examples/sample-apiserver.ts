/**
 * A sample aggregated API server: the example to copy for serving a group through svc-apiserver's
 * aggregator (docs/architecture.md, "Aggregated API servers"). It serves wardle.example.com/v1alpha1
 * Flunders (namespaced, kept in memory: get, list, watch, create, delete) and trusts only requests
 * that come through the aggregator: the client certificate must be signed by the request-header CA
 * (--requestheader-client-ca) and name an allowed proxy (--allowed-names), and the caller is then
 * read from X-Remote-User / X-Remote-Group / X-Remote-Extra-* (spec 5.5; upstream's request-header
 * authentication). Each Flunder records who created it, which shows the caller's identity arriving.
 *
 *   node dist/docs/examples/sample-apiserver.js --port 8443 --cert tls.crt --key tls.key \
 *     --requestheader-client-ca front-proxy-ca.crt --allowed-names front-proxy-client \
 *     [--bind-address 127.0.0.1]
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { TLSSocket } from 'node:tls';

const GROUP = 'wardle.example.com';
const VERSION = 'v1alpha1';
const GV = `${GROUP}/${VERSION}`;

interface Caller {
  username: string;
  groups: string[];
}

type Flunder = { apiVersion: string; kind: 'Flunder'; metadata: Record<string, unknown>; spec: Record<string, unknown> };

function arg(name: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || !process.argv[i + 1]) throw new Error(`--${name} is required`);
  return process.argv[i + 1];
}

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason, message, code }));
}

function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Request-header authentication: a verified proxy certificate with an allowed name, then the identity headers. */
function authenticate(req: IncomingMessage, allowed: readonly string[]): Caller | undefined {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) return undefined;
  const cn = socket.getPeerCertificate()?.subject?.CN;
  if (allowed.length && (typeof cn !== 'string' || !allowed.includes(cn))) return undefined;
  const user = req.headers['x-remote-user'];
  if (typeof user !== 'string' || !user) return undefined;
  const groups = req.headersDistinct['x-remote-group'] ?? [];
  return { username: user, groups };
}

const resourceList = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: GV,
  resources: [{ name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['create', 'delete', 'get', 'list', 'watch'], shortNames: ['fl'] }],
};

/**
 * The Flunder schema, published in /openapi/v2 and /openapi/v3 so the aggregator can merge it
 * (kubectl explain flunders then works through svc-apiserver). The definition's name and its
 * x-kubernetes-group-version-kind are what clients look the kind up by.
 */
const FLUNDER_DEF = 'com.example.wardle.v1alpha1.Flunder';
function flunderSchema(): Record<string, unknown> {
  const str = (description: string) => ({ type: 'string', description });
  return {
    description: 'A Flunder: the sample aggregated server\'s only kind.',
    type: 'object',
    properties: {
      apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
      kind: str('Kind is a string value representing the REST resource this object represents.'),
      metadata: { type: 'object', description: "Standard object's metadata.", properties: { name: str('Name of the flunder.'), namespace: str('Namespace of the flunder.') } },
      spec: {
        type: 'object',
        description: 'What the flunder refers to, and who created it.',
        properties: {
          reference: str('The name of another flunder or fischer this one refers to.'),
          createdBy: str('The user who created the flunder, as the aggregator named it (X-Remote-User).'),
          createdByGroups: { type: 'array', items: { type: 'string' }, description: "The creator's groups (X-Remote-Group)." },
        },
      },
    },
    'x-kubernetes-group-version-kind': [{ group: GROUP, version: VERSION, kind: 'Flunder' }],
  };
}

/** /openapi/v2 (Swagger 2.0) or the group version's /openapi/v3 document. */
function openApi(v3: boolean): Record<string, unknown> {
  const ref = v3 ? `#/components/schemas/${FLUNDER_DEF}` : `#/definitions/${FLUNDER_DEF}`;
  const gvk = { group: GROUP, version: VERSION, kind: 'Flunder' };
  const ok = v3 ? { description: 'OK', content: { 'application/json': { schema: { $ref: ref } } } } : { description: 'OK', schema: { $ref: ref } };
  const paths = {
    [`/apis/${GV}/namespaces/{namespace}/flunders`]: { get: { operationId: 'listFlunder', 'x-kubernetes-action': 'list', 'x-kubernetes-group-version-kind': gvk, responses: { '200': { description: 'OK' } } } },
    [`/apis/${GV}/namespaces/{namespace}/flunders/{name}`]: { get: { operationId: 'readFlunder', 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': gvk, responses: { '200': ok } } },
  };
  if (v3) return { openapi: '3.0.0', info: { title: 'wardle', version: VERSION }, paths, components: { schemas: { [FLUNDER_DEF]: flunderSchema() } } };
  return { swagger: '2.0', info: { title: 'wardle', version: VERSION }, paths, definitions: { [FLUNDER_DEF]: flunderSchema() } };
}

function main(): void {
  const flunders = new Map<string, Flunder>();
  const watchers = new Set<{ ns: string; res: ServerResponse }>();
  let rv = 1;
  const allowed = arg('allowed-names').split(',').filter(Boolean);
  const notify = (type: string, f: Flunder) => {
    for (const w of watchers) if (w.ns === f.metadata.namespace) w.res.write(JSON.stringify({ type, object: f }) + '\n');
  };
  const server = createServer(
    { cert: readFileSync(arg('cert')), key: readFileSync(arg('key')), ca: readFileSync(arg('requestheader-client-ca')), requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const caller = authenticate(req, allowed);
      if (!caller) return status(res, 401, 'Unauthorized', 'Unauthorized');
      const url = new URL(req.url ?? '/', 'https://sample');
      const path = url.pathname.replace(/\/+$/, '');
      if (path === `/apis/${GROUP}`) return json(res, 200, { kind: 'APIGroup', apiVersion: 'v1', name: GROUP, versions: [{ groupVersion: GV, version: VERSION }], preferredVersion: { groupVersion: GV, version: VERSION } });
      if (path === `/apis/${GV}`) return json(res, 200, resourceList);
      if (path === '/openapi/v2') return json(res, 200, openApi(false));
      if (path === '/openapi/v3') return json(res, 200, { paths: { [`apis/${GV}`]: { serverRelativeURL: `/openapi/v3/apis/${GV}` } } });
      if (path === `/openapi/v3/apis/${GV}`) return json(res, 200, openApi(true));
      const m = new RegExp(`^/apis/${GV.replace(/\./g, '\\.')}/namespaces/([^/]+)/flunders(?:/([^/]+))?$`).exec(path);
      if (!m) return status(res, 404, 'NotFound', 'the server could not find the requested resource');
      const [, ns, name] = m;
      if (req.method === 'GET' && !name && url.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        res.flushHeaders(); // the client waits for the head before the first event
        const w = { ns, res };
        watchers.add(w);
        req.on('close', () => watchers.delete(w));
        return;
      }
      if (req.method === 'GET' && !name) {
        const items = [...flunders.values()].filter((f) => f.metadata.namespace === ns);
        return json(res, 200, { kind: 'FlunderList', apiVersion: GV, metadata: { resourceVersion: String(rv) }, items });
      }
      if (req.method === 'GET') {
        const f = flunders.get(`${ns}/${name}`);
        return f ? json(res, 200, f) : status(res, 404, 'NotFound', `flunders.${GROUP} "${name}" not found`);
      }
      if (req.method === 'DELETE' && name) {
        const f = flunders.get(`${ns}/${name}`);
        if (!f) return status(res, 404, 'NotFound', `flunders.${GROUP} "${name}" not found`);
        flunders.delete(`${ns}/${name}`);
        notify('DELETED', f);
        return json(res, 200, f);
      }
      if (req.method === 'POST' && !name) {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString('utf8')));
        req.on('end', () => {
          let f: Flunder;
          try {
            f = JSON.parse(body) as Flunder;
          } catch {
            return status(res, 400, 'BadRequest', 'the body is not JSON');
          }
          const fname = typeof f.metadata?.name === 'string' ? f.metadata.name : '';
          if (!fname) return status(res, 422, 'Invalid', 'metadata.name: Required value');
          if (flunders.has(`${ns}/${fname}`)) return status(res, 409, 'AlreadyExists', `flunders.${GROUP} "${fname}" already exists`);
          const stored: Flunder = {
            apiVersion: GV,
            kind: 'Flunder',
            metadata: { ...f.metadata, namespace: ns, resourceVersion: String(++rv), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
            spec: { ...(f.spec ?? {}), createdBy: caller.username, createdByGroups: caller.groups },
          };
          flunders.set(`${ns}/${fname}`, stored);
          notify('ADDED', stored);
          json(res, 201, stored);
        });
        return;
      }
      status(res, 405, 'MethodNotAllowed', `${req.method} is not supported here`);
    },
  );
  server.listen(Number(arg('port')), process.argv.includes('--bind-address') ? arg('bind-address') : '127.0.0.1', () => process.stdout.write('serving\n'));
  process.on('SIGTERM', () => {
    for (const w of watchers) w.res.end();
    server.close(() => process.exit(0));
  });
}

main();
