/**
 * Kubernetes protobuf against a real svc-apiserver: stock kubectl's imperative generators
 * (create namespace/configmap/secret/serviceaccount/service send protobuf bodies and read
 * protobuf answers), the older and newer kubectl binaries found on the machine, and over HTTPS a
 * protobuf list, a protobuf watch stream, protobuf DeleteOptions and a protobuf Status.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from 'undici';
import { decodeObject, decodeWatchFrames, encodeObject } from '../../../apiserver/codec/envelope';
import { deleteOptionsSchema, listSchemaOf, statusSchema } from '../../../apiserver/registry/meta-schemas';
import { configMapSchema } from '../../../apiserver/registry/types/configmaps';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';

const run = promisify(execFile);
const PB = 'application/vnd.kubernetes.protobuf';
let s: RunningApiServer;
let dir: string;

test.before(async () => {
  s = await startApiServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-protobuf-'));
});
test.after.always(async () => {
  await s?.stop();
});

async function kubectl(args: string[], bin = '/usr/bin/kubectl'): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(bin, ['--kubeconfig', s.kubeconfig, ...args], { timeout: 30_000, maxBuffer: 16 << 20 });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed: ${e.stderr ?? ''}${e.stdout ?? ''}${e.message}`, { cause: err });
  }
}

async function getJson(path: string): Promise<Record<string, any>> {
  const { stdout } = await kubectl(['get', '--raw', path]);
  return JSON.parse(stdout) as Record<string, any>;
}

test.serial('kubectl create namespace|configmap|secret|serviceaccount|service: protobuf both ways', async (t) => {
  const ns = await kubectl(['create', 'namespace', 'pb', '-v=8']);
  t.regex(ns.stdout, /namespace\/pb created/);
  // -v=8 logs the request's and the response's headers: both protobuf.
  t.is((ns.stderr.match(/Content-Type: application\/vnd\.kubernetes\.protobuf/g) ?? []).length, 2, ns.stderr);
  const binary = Buffer.from([0, 1, 2, 0xfe, 0xff, 0x6b, 0x38, 0x73, 0]);
  const file = join(dir, 'blob.bin');
  writeFileSync(file, binary);
  t.regex((await kubectl(['create', 'configmap', 'settings', '-n', 'pb', '--from-literal=level=debug', `--from-file=blob=${file}`])).stdout, /configmap\/settings created/);
  t.regex((await kubectl(['create', 'secret', 'generic', 'creds', '-n', 'pb', '--from-literal=password=s3cr3t'])).stdout, /secret\/creds created/);
  t.regex((await kubectl(['create', 'serviceaccount', 'web', '-n', 'pb'])).stdout, /serviceaccount\/web created/);
  t.regex((await kubectl(['create', 'service', 'clusterip', 'web', '-n', 'pb', '--tcp=80:8080'])).stdout, /service\/web created/);

  const cm = await getJson('/api/v1/namespaces/pb/configmaps/settings');
  t.deepEqual(cm.data, { level: 'debug' });
  t.deepEqual(cm.binaryData, { blob: binary.toString('base64') });
  const secret = await getJson('/api/v1/namespaces/pb/secrets/creds');
  t.deepEqual(secret.data, { password: Buffer.from('s3cr3t').toString('base64') });
  t.is(secret.type, 'Opaque');
  // Go writes every field; only what kubectl set is stored (no generateName "", no selfLink "").
  t.false('generateName' in secret.metadata || 'selfLink' in secret.metadata);
  const svc = await getJson('/api/v1/namespaces/pb/services/web');
  t.deepEqual(svc.spec.ports, [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }]);
  t.deepEqual(svc.spec.selector, { app: 'web' });
  t.is((await getJson('/api/v1/namespaces/pb/serviceaccounts/web')).metadata.name, 'web');

  // A protobuf Status comes back for a conflict, and kubectl prints its message.
  const again = await kubectl(['create', 'configmap', 'settings', '-n', 'pb']).then(
    () => 'created twice',
    (err: Error) => err.message,
  );
  t.regex(again, /configmaps "settings" already exists/);
});

test.serial('older and newer kubectl binaries: JSON up to 1.31, protobuf from 1.32', async (t) => {
  const versions = ['1.27', '1.31', '1.33'].filter((v) => existsSync(`/usr/lib/google-cloud-sdk/bin/kubectl.${v}`));
  t.log(`kubectl binaries found beside /usr/bin/kubectl: ${versions.join(', ') || 'none'}`);
  for (const v of versions) {
    const name = `v${v.replace('.', '-')}`;
    const out = await kubectl(['create', 'configmap', name, '-n', 'pb', '--from-literal=k=v', '-v=8'], `/usr/lib/google-cloud-sdk/bin/kubectl.${v}`);
    t.regex(out.stdout, new RegExp(`configmap/${name} created`));
    // Before 1.32 kubectl's generators sent JSON; from 1.32 on they send protobuf.
    t.is(/Content-Type: application\/vnd\.kubernetes\.protobuf/.test(out.stderr), Number(v.split('.')[1]) >= 32, v);
    t.deepEqual((await getJson(`/api/v1/namespaces/pb/configmaps/${name}`)).data, { k: 'v' });
  }
});

test.serial('over HTTPS: a protobuf list, protobuf DeleteOptions and a protobuf Status', async (t) => {
  const list = await request(`${s.url}/api/v1/namespaces/pb/configmaps`, { dispatcher: s.admin, headers: { accept: `${PB}, application/json` } });
  t.is(list.headers['content-type'], PB);
  const decoded = decodeObject(listSchemaOf(configMapSchema), Buffer.from(await list.body.arrayBuffer()));
  t.is(decoded.kind, 'ConfigMapList');
  t.true((decoded.items as Array<{ metadata: { name: string } }>).some((i) => i.metadata.name === 'settings'));

  const options = (o: Record<string, unknown>) => encodeObject(deleteOptionsSchema, { apiVersion: 'meta.k8s.io/v1', kind: 'DeleteOptions', ...o });
  const del = (body: Buffer) =>
    request(`${s.url}/api/v1/namespaces/pb/configmaps/settings`, { method: 'DELETE', dispatcher: s.admin, body, headers: { 'content-type': PB, accept: `${PB}, application/json` } });
  const conflict = await del(options({ preconditions: { uid: 'not-this-one' } }));
  t.is(conflict.statusCode, 409);
  t.is(conflict.headers['content-type'], PB);
  t.like(decodeObject(statusSchema, Buffer.from(await conflict.body.arrayBuffer())), { kind: 'Status', reason: 'Conflict', code: 409 });
  const gone = await del(options({ gracePeriodSeconds: 0 }));
  t.is(gone.statusCode, 200);
  t.like(decodeObject(statusSchema, Buffer.from(await gone.body.arrayBuffer())), { kind: 'Status', status: 'Success' });
  const after = await request(`${s.url}/api/v1/namespaces/pb/configmaps/settings`, { dispatcher: s.admin });
  await after.body.text();
  t.is(after.statusCode, 404);
});

test.serial('over HTTPS: a protobuf watch streams frames of what kubectl creates', async (t) => {
  const start = await getJson('/api/v1/namespaces/pb/configmaps');
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 30_000);
  try {
    const res = await request(`${s.url}/api/v1/namespaces/pb/configmaps?watch=1&resourceVersion=${start.metadata.resourceVersion}`, {
      dispatcher: s.admin,
      headers: { accept: `${PB}, application/json` },
      signal: ac.signal,
    });
    t.is(res.headers['content-type'], `${PB};stream=watch`);
    await kubectl(['create', 'configmap', 'watched', '-n', 'pb', '--from-literal=k=v']);
    await kubectl(['delete', 'configmap', 'watched', '-n', 'pb']);
    let buf: Buffer = Buffer.alloc(0);
    const seen: Array<[string, string]> = [];
    for await (const chunk of res.body) {
      buf = Buffer.concat([buf, chunk as Buffer]);
      const { events, rest } = decodeWatchFrames(buf);
      buf = rest;
      for (const e of events) seen.push([e.type, (decodeObject(configMapSchema, e.object).metadata as { name: string }).name]);
      if (seen.length >= 2) break;
    }
    t.deepEqual(seen, [
      ['ADDED', 'watched'],
      ['DELETED', 'watched'],
    ]);
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
});
