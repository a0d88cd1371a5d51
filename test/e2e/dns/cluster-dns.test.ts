/**
 * Cluster DNS against a real svc-apiserver (issue 24, item 4): svc-node's DNS server code (its
 * informers over the agent's API client) on a loopback port, Services and pods made with kubectl,
 * the EndpointSlice controller's slices, and a real DNS client (dig, from Debian's dnsutils)
 * asking for A, SRV, PTR, headless and pod-hostname names, an ExternalName and a name forwarded to
 * a fake upstream resolver on loopback. Nothing is queried outside 127.0.0.1.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { HttpApiClient } from '../../../agent/client/http-api-client';
import { loadKubeconfig } from '../../../agent/client/kubeconfig';
import { DEFAULT_CACHE_LIMITS } from '../../../agent/dns/answer-cache';
import { ClusterDns } from '../../../agent/dns/cluster-dns';
import { realClock } from '../../../agent/platform/clock';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { DnsResponder } from '../../helpers/dns-responder';
import { kubectl, run } from '../../helpers/real-clients';

let s: RunningApiServer;
let dataDir: string;
let upstream: DnsResponder;
let port = 0;
const ac = new AbortController();
let dnsRun: Promise<void> | undefined;
const quiet = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, fatal: () => {}, child: () => quiet } as never;

test.before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-dns-e2e-'));
  s = await startApiServer({ dataDir });
  upstream = new DnsResponder({ hosts: { 'outside.example.test': ['192.0.2.77'] } });
  await upstream.start();
  const client = new HttpApiClient(await loadKubeconfig(s.kubeconfig));
  const dns = new ClusterDns({
    client,
    clock: realClock,
    log: quiet,
    domain: 'cluster.local',
    listen: { address: '127.0.0.1', port: 0 },
    upstreams: [{ address: '127.0.0.1', port: upstream.port }],
    upstreamTimeoutMs: 2000,
    cache: DEFAULT_CACHE_LIMITS,
  });
  dnsRun = dns.run(ac.signal);
  port = (await dns.server.listening()).port;
});

test.after.always(async () => {
  ac.abort();
  await dnsRun;
  await upstream?.stop();
  await s?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function create(obj: object): Promise<void> {
  const r = await kubectl(s.kubeconfig, ['create', '-f', '-'], { input: JSON.stringify(obj) });
  if (r.code !== 0) throw new Error(`kubectl create: ${r.stderr}`);
}

async function setPodReady(name: string, ip: string): Promise<void> {
  const status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] };
  const res = await request(`${s.url}/api/v1/namespaces/default/pods/${name}/status`, {
    method: 'PATCH',
    dispatcher: s.admin,
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ status }),
  });
  if (res.statusCode !== 200) throw new Error(`status of ${name}: ${res.statusCode} ${await res.body.text()}`);
  await res.body.dump();
}

/** dig against the server under test on loopback; returns its output. */
async function dig(...args: string[]): Promise<string> {
  const r = await run('/usr/bin/dig', ['@127.0.0.1', '-p', String(port), '+time=3', '+tries=1', ...args], { timeoutMs: 20_000 });
  if (r.code !== 0) throw new Error(`dig ${args.join(' ')} exited ${r.code}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}
const short = async (...args: string[]) => (await dig('+short', ...args)).trim().split('\n').filter((l) => l !== '').sort();
const status = async (...args: string[]) => /status: ([A-Z]+)/.exec(await dig('+noall', '+comments', ...args))?.[1];

/** Asks until the answer matches (the informers follow the API asynchronously); at most 100 tries. */
async function until(what: () => Promise<string[]>, want: string[]): Promise<string[]> {
  let got: string[] = [];
  for (let i = 0; i < 100; i++) {
    got = await what();
    if (JSON.stringify(got) === JSON.stringify(want)) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
  return got;
}

const pod = (name: string, labels: Record<string, string>, extra: object = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'c', image: 'busybox:1.36', ports: [{ name: 'pg', containerPort: 5432 }] }], ...extra },
});

test.serial('services, headless endpoints, pod hostnames, SRV and PTR answered from the API; other names forwarded', async (t) => {
  await create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
  await create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'default' }, spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ name: 'pg', port: 5432 }] } });
  await create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'outside.example.test' } });
  await create(pod('db-0', { app: 'db' }, { hostname: 'db-0', subdomain: 'db' }));
  await create(pod('db-1', { app: 'db' }));
  await setPodReady('db-0', '10.244.1.10');
  await setPodReady('db-1', '10.244.1.11');
  const r = await kubectl(s.kubeconfig, ['get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}']);
  const clusterIP = r.stdout.trim();
  t.regex(clusterIP, /^\d+\.\d+\.\d+\.\d+$/);

  t.deepEqual(await until(() => short('web.default.svc.cluster.local', 'A'), [clusterIP]), [clusterIP], 'A: the ClusterIP');
  t.deepEqual(await short('_http._tcp.web.default.svc.cluster.local', 'SRV'), ['0 100 80 web.default.svc.cluster.local.'], 'SRV of the named port');
  t.deepEqual(await short('-x', clusterIP), ['web.default.svc.cluster.local.'], 'PTR of the ClusterIP');
  t.deepEqual(await until(() => short('db.default.svc.cluster.local', 'A'), ['10.244.1.10', '10.244.1.11']), ['10.244.1.10', '10.244.1.11'], 'headless: the ready pods');
  t.deepEqual(await short('db-0.db.default.svc.cluster.local', 'A'), ['10.244.1.10'], 'the pod with hostname db-0 and subdomain db');
  t.deepEqual(await short('_pg._tcp.db.default.svc.cluster.local', 'SRV'), ['0 50 5432 10-244-1-11.db.default.svc.cluster.local.', '0 50 5432 db-0.db.default.svc.cluster.local.']);
  t.deepEqual(await short('-x', '10.244.1.10'), ['db-0.db.default.svc.cluster.local.'], 'PTR of an endpoint');
  t.deepEqual(await short('ext.default.svc.cluster.local', 'A'), ['192.0.2.77', 'outside.example.test.'], 'ExternalName: the CNAME and its target');
  t.deepEqual(await short('outside.example.test', 'A'), ['192.0.2.77'], 'forwarded to the upstream');
  t.deepEqual(await dig('+tcp', '+short', 'web.default.svc.cluster.local', 'A').then((o) => o.trim()), clusterIP, 'over TCP too');
  t.is(await status('missing.default.svc.cluster.local', 'A'), 'NXDOMAIN');
  t.is(await status('web.default.svc.cluster.local', 'AAAA'), 'NOERROR', 'NODATA: the name exists');
  t.is(await status('nowhere.example.test', 'A'), 'NXDOMAIN', 'the upstream NXDOMAIN passes through');
  t.false(upstream.asked.some((n) => n.endsWith('cluster.local')), 'no cluster name reached the upstream');
});

test.serial('deleting a Service removes its names', async (t) => {
  const r = await kubectl(s.kubeconfig, ['delete', 'service', 'web']);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(await until(async () => [String(await status('web.default.svc.cluster.local', 'A'))], ['NXDOMAIN']), ['NXDOMAIN']);
});
