/**
 * CBOR against real svc-apiservers (issue 17, item 2; spec 4.5, 6.1, 9.4): one started with
 * --feature-gates=CBORServingAndStorage=true serves create, get, list, update, delete options,
 * Status and watch in CBOR to a client whose encoder and decoder are not ours (Debian's
 * python3-cbor2, test/e2e/apiserver/cbor_client.py) and to stock kubectl 1.32 and 1.33 with
 * client-go's CBOR gates; one started without the gate (the default) answers CBOR with 415 and 406.
 */
import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { repoRoot, startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const CODEC = join(repoRoot, 'test', 'e2e', 'apiserver', 'cbor_client.py');
const CBOR = 'application/cbor';
const KUBECTL_133 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';

let on: RunningApiServer;
let off: RunningApiServer;

test.before(async () => {
  [on, off] = await Promise.all([startApiServer({ args: ['--feature-gates=CBORServingAndStorage=true'] }), startApiServer()]);
  for (const s of [on, off]) await json(s, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cb' } });
});
test.after.always(async () => {
  await Promise.all([on?.stop(), off?.stop()]);
});

interface Decoded {
  value: Record<string, any>;
  facts: { selfDescribed: boolean; keys: string[]; strings: string[]; tags: number[] };
}

/** The independent encoder: {"$tag22": base64} is tag 22 around raw bytes; byteStrings writes strings as client-go does. */
function pyEncode(value: unknown, byteStrings = false): Buffer {
  return execFileSync(PYTHON, [CODEC, 'encode', ...(byteStrings ? ['--byte-strings'] : [])], { input: JSON.stringify(value), timeout: 10_000 });
}

function pyDecode(bytes: Buffer): Decoded {
  return JSON.parse(execFileSync(PYTHON, [CODEC, 'decode'], { input: bytes, timeout: 10_000 }).toString('utf8')) as Decoded;
}

function pyDecodeSeq(bytes: Buffer): Decoded[] {
  return JSON.parse(execFileSync(PYTHON, [CODEC, 'decode-seq'], { input: bytes, timeout: 10_000 }).toString('utf8')) as Decoded[];
}

async function call(s: RunningApiServer, method: string, path: string, o: { body?: Buffer | string; contentType?: string; accept?: string } = {}) {
  const headers: Record<string, string> = {};
  if (o.contentType) headers['content-type'] = o.contentType;
  if (o.accept) headers.accept = o.accept;
  const res = await request(`${s.url}${path}`, { method: method as 'GET', dispatcher: s.admin, headers, body: o.body, headersTimeout: 10_000, bodyTimeout: 10_000 });
  return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), body: Buffer.from(await res.body.arrayBuffer()) };
}

async function json(s: RunningApiServer, method: string, path: string, body?: unknown): Promise<Record<string, any>> {
  const res = await call(s, method, path, { body: body === undefined ? undefined : JSON.stringify(body), contentType: 'application/json' });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.toString('utf8')}`);
  return JSON.parse(res.body.toString('utf8')) as Record<string, any>;
}

test.serial('create, get, list and update in CBOR with an independent encoder and decoder', async (t) => {
  const raw = Buffer.from([0, 1, 2, 0xfe, 0xff]);
  // A generic client: text strings, binaryData as tag 22 around the bytes.
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', labels: { app: 'web' } }, data: { level: 'debug', motd: 'ünïcödé' }, binaryData: { blob: { $tag22: raw.toString('base64') } } };
  const created = await call(on, 'POST', '/api/v1/namespaces/cb/configmaps', { body: pyEncode(cm), contentType: CBOR, accept: CBOR });
  t.is(created.status, 201, created.body.toString('utf8'));
  t.is(created.type, CBOR);
  const c = pyDecode(created.body);
  // Upstream's wire form: self-described, every key and string a byte string, []byte in tag 22.
  t.deepEqual(c.facts, { selfDescribed: true, keys: ['bytes'], strings: ['bytes'], tags: [22] });
  t.like(c.value, { kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'cb', labels: { app: 'web' } }, data: cm.data, binaryData: { blob: raw.toString('base64') } });
  t.regex(c.value.metadata.creationTimestamp as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  // client-go's form: byte strings everywhere, Secret data in tag 22.
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, type: 'Opaque', data: { password: { $tag22: Buffer.from('s3cr3t\0').toString('base64') } } };
  const made = await call(on, 'POST', '/api/v1/namespaces/cb/secrets', { body: pyEncode(secret, true), contentType: CBOR });
  t.is(made.status, 201, made.body.toString('utf8'));
  t.is(made.type, 'application/json', 'no Accept: JSON');
  t.deepEqual((await json(on, 'GET', '/api/v1/namespaces/cb/secrets/creds')).data, { password: Buffer.from('s3cr3t\0').toString('base64') });

  // get and list: the same objects as JSON's.
  const asJson = await json(on, 'GET', '/api/v1/namespaces/cb/configmaps/settings');
  const got = await call(on, 'GET', '/api/v1/namespaces/cb/configmaps/settings', { accept: CBOR });
  t.is(got.type, CBOR);
  t.deepEqual(pyDecode(got.body).value, asJson);
  const listJson = await json(on, 'GET', '/api/v1/namespaces/cb/configmaps');
  const list = await call(on, 'GET', '/api/v1/namespaces/cb/configmaps', { accept: `${CBOR}, application/json` });
  t.is(list.type, CBOR);
  const l = pyDecode(list.body).value;
  t.is(l.kind, 'ConfigMapList');
  t.deepEqual(l.items, listJson.items);

  // update in CBOR.
  const update = { ...asJson, data: { level: 'info' } } as Record<string, unknown>;
  const updated = await call(on, 'PUT', '/api/v1/namespaces/cb/configmaps/settings', { body: pyEncode(update), contentType: CBOR, accept: CBOR });
  t.is(updated.status, 200, updated.body.toString('utf8'));
  t.deepEqual(pyDecode(updated.body).value.data, { level: 'info' });
});

test.serial('watch in CBOR: an application/cbor-seq stream of self-described {type, object} events', async (t) => {
  const start = await json(on, 'POST', '/api/v1/namespaces/cb/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' }, data: { n: '1' } });
  await json(on, 'PUT', '/api/v1/namespaces/cb/configmaps/watched', { ...start, data: { n: '2' } });
  await json(on, 'DELETE', '/api/v1/namespaces/cb/configmaps/watched');
  // From the create's version the history replays the update and the delete; the watch ends after a second.
  const path = `/api/v1/namespaces/cb/configmaps?watch=1&resourceVersion=${start.metadata.resourceVersion}&timeoutSeconds=1&fieldSelector=metadata.name%3Dwatched`;
  for (const accept of [CBOR, 'application/cbor-seq']) {
    const res = await call(on, 'GET', path, { accept });
    t.is(res.status, 200);
    t.is(res.type, 'application/cbor-seq', accept);
    const events = pyDecodeSeq(res.body);
    t.deepEqual(
      events.map((e) => [e.value.type, e.value.object.metadata.name, e.value.object.data.n]),
      [
        ['MODIFIED', 'watched', '2'],
        ['DELETED', 'watched', '2'],
      ],
    );
    t.true(events.every((e) => e.facts.selfDescribed));
  }
});

test.serial('errors to CBOR clients are CBOR Status; malformed CBOR is a 400; CBOR DeleteOptions are read; apply-patch+cbor is served', async (t) => {
  const missing = await call(on, 'GET', '/api/v1/namespaces/cb/configmaps/nope', { accept: `${CBOR}, application/json` });
  t.is(missing.status, 404);
  t.is(missing.type, CBOR);
  t.like(pyDecode(missing.body).value, { kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });

  // Duplicate keys (a map of two "name" entries) and invalid UTF-8, as hand-written bytes.
  const dup = Buffer.from('d9d9f7a3' + '646b696e64' + '69436f6e6669674d6170' + '686d65746164617461' + 'a2' + '646e616d654161' + '646e616d654162', 'hex');
  const bad = await call(on, 'POST', '/api/v1/namespaces/cb/configmaps', { body: dup, contentType: CBOR, accept: CBOR });
  t.is(bad.status, 400);
  t.regex(pyDecode(bad.body).value.message as string, /duplicate map key "name" at \.metadata/);
  const utf8 = await call(on, 'POST', '/api/v1/namespaces/cb/configmaps', { body: Buffer.from('a1646b696e6462c328', 'hex'), contentType: CBOR });
  t.is(utf8.status, 400);
  t.regex(utf8.body.toString('utf8'), /not valid UTF-8 at \.kind/);

  // DeleteOptions in CBOR: a precondition that does not hold is a 409, so the body was read.
  const conflict = await call(on, 'DELETE', '/api/v1/namespaces/cb/configmaps/settings', {
    body: pyEncode({ apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'not-the-uid' } }, true),
    contentType: CBOR,
    accept: CBOR,
  });
  t.is(conflict.status, 409);
  t.is(pyDecode(conflict.body).value.reason, 'Conflict');

  // Server-side apply in CBOR (issue 18): a configuration of another kind is upstream's 400; the right one merges.
  const wrong = await call(on, 'PATCH', '/api/v1/namespaces/cb/configmaps/settings?fieldManager=py', { body: pyEncode({ data: { a: 'b' } }), contentType: 'application/apply-patch+cbor' });
  t.is(wrong.status, 400);
  t.regex(wrong.body.toString('utf8'), /invalid object type: \/, Kind=/);
  const apply = await call(on, 'PATCH', '/api/v1/namespaces/cb/configmaps/settings?fieldManager=py', {
    body: pyEncode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: 'b' } }),
    contentType: 'application/apply-patch+cbor',
  });
  t.is(apply.status, 200, apply.body.toString('utf8'));
  const merge = await call(on, 'PATCH', '/api/v1/namespaces/cb/configmaps/settings', { body: pyEncode({ data: { a: 'b' } }), contentType: CBOR });
  t.is(merge.status, 415, 'no CBOR merge patch (spec 4.3)');
});

test.serial('without the gate (the default) CBOR is 415 as a body and 406 as the only Accept; JSON when listed after it', async (t) => {
  const body = pyEncode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
  const post = await call(off, 'POST', '/api/v1/namespaces/cb/configmaps', { body, contentType: CBOR });
  t.is(post.status, 415);
  t.notRegex(post.body.toString('utf8'), /cbor/);
  await json(off, 'POST', '/api/v1/namespaces/cb/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
  t.is((await call(off, 'PUT', '/api/v1/namespaces/cb/configmaps/x', { body, contentType: CBOR })).status, 415);
  t.is((await call(off, 'DELETE', '/api/v1/namespaces/cb/configmaps/x', { body: pyEncode({ kind: 'DeleteOptions' }), contentType: CBOR })).status, 415);
  t.is((await call(off, 'PATCH', '/api/v1/namespaces/cb/configmaps/x', { body, contentType: 'application/apply-patch+cbor' })).status, 415);
  const only = await call(off, 'GET', '/api/v1/namespaces/cb/configmaps/x', { accept: CBOR });
  t.is(only.status, 406);
  t.notRegex(only.body.toString('utf8'), /cbor/);
  t.is((await call(off, 'GET', '/api/v1/namespaces/cb/configmaps?watch=1&timeoutSeconds=1', { accept: 'application/cbor-seq' })).status, 406);
  const fallback = await call(off, 'GET', '/api/v1/namespaces/cb/configmaps/x', { accept: `${CBOR}, application/json` });
  t.is(fallback.status, 200);
  t.is(fallback.type, 'application/json');
});

test.serial('kubectl 1.32 and 1.33 with client-go\'s CBOR gates list and watch in CBOR and read CBOR Status', async (t) => {
  const binaries = ['/usr/bin/kubectl', KUBECTL_133].filter((b) => existsSync(b));
  t.true(binaries.length > 0, 'no kubectl on this machine');
  const env = { ...process.env, KUBE_FEATURE_ClientsAllowCBOR: 'true', KUBE_FEATURE_ClientsPreferCBOR: 'true' };
  for (const bin of binaries) {
    const kubectl = (args: string[]) => run(bin, ['--kubeconfig', on.kubeconfig, ...args], { env, timeout: 30_000, maxBuffer: 16 << 20 });
    await json(on, 'POST', '/api/v1/namespaces/cb/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kc', labels: { ready: 'yes' } } });
    // kubectl wait reads through the dynamic client: a CBOR list, then a CBOR watch until the condition holds.
    const waited = await kubectl(['wait', '--for=jsonpath={.metadata.labels.ready}=yes', 'configmap/kc', '-n', 'cb', '--timeout=20s', '-v=8']);
    t.regex(waited.stdout, /configmap\/kc condition met/, bin);
    t.regex(waited.stderr, /Content-Type: application\/cbor\n/, bin);
    t.regex(waited.stderr, /Content-Type: application\/cbor-seq/, bin);
    // kubectl delete waits for the object to go: its last GET reads a CBOR 404 Status.
    const deleted = await kubectl(['delete', 'configmap', 'kc', '-n', 'cb', '-v=8']);
    t.regex(deleted.stdout, /configmap "kc" deleted/, bin);
    t.regex(deleted.stderr, /404 Not Found[\s\S]*Content-Type: application\/cbor/, bin);
  }
});
