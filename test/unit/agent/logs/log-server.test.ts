/**
 * /containerLogs over the minimal secured server: client certificates from the cluster CA, only
 * system:masters or the API server's kubelet-client identity may read; the handler finds the
 * container's log through the pod manager (here on the simulator).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Agent, request } from 'undici';
import { createCA, issue, type KeyPairPem } from '../../../../apiserver/pki/certs';
import { containerLogHandler, parseContainerLogPath, type LogLocator } from '../../../../agent/logs/container-log-handler';
import { LogServer } from '../../../../agent/logs/log-server';
import { ensureServingCert } from '../../../../agent/logs/serving-cert';
import { realClock } from '../../../../agent/node/clock';
import { BUSYBOX, isRunningReady, startHarness } from '../pod/harness';
import { MemLog } from '../node/fakes/mem-log';

const DAY = 24 * 3600_000;

interface Pki {
  ca: KeyPairPem;
  admin: KeyPairPem;
  apiserver: KeyPairPem;
  stranger: KeyPairPem;
  otherCa: KeyPairPem;
  foreign: KeyPairPem;
}

let pki: Pki | undefined;
async function certs(): Promise<Pki> {
  if (pki) return pki;
  const ca = await createCA('svc-ca');
  const otherCa = await createCA('other-ca');
  pki = {
    ca,
    otherCa,
    admin: await issue(ca, { commonName: 'svc-admin', organizations: ['system:masters'], usage: 'client', validityMs: DAY }),
    apiserver: await issue(ca, { commonName: 'svc-apiserver-kubelet-client', usage: 'client', validityMs: DAY }),
    stranger: await issue(ca, { commonName: 'jane', organizations: ['developers'], usage: 'client', validityMs: DAY }),
    foreign: await issue(otherCa, { commonName: 'svc-admin', organizations: ['system:masters'], usage: 'client', validityMs: DAY }),
  };
  return pki;
}

async function get(port: number, p: string, client?: KeyPairPem): Promise<{ status: number; body: string }> {
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) } });
  try {
    const res = await request(`https://127.0.0.1:${port}${p}`, { dispatcher });
    return { status: res.statusCode, body: await res.body.text() };
  } finally {
    await dispatcher.close();
  }
}

test('paths: /containerLogs/{ns}/{pod}/{container} only', (t) => {
  t.deepEqual(parseContainerLogPath('/containerLogs/default/web/app'), { namespace: 'default', pod: 'web', container: 'app' });
  t.deepEqual(parseContainerLogPath('/containerLogs/a%2Fb/p/c'), { namespace: 'a/b', pod: 'p', container: 'c' });
  t.is(parseContainerLogPath('/containerLogs/default/web'), undefined);
  t.is(parseContainerLogPath('/pods'), undefined);
});

test('a self-signed serving certificate is made once and reused', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-serving-'));
  try {
    const a = await ensureServingCert({ certDir: dir, nodeName: 'node-1', ips: ['192.168.1.5'] });
    t.true(a.generated);
    const b = await ensureServingCert({ certDir: dir, nodeName: 'node-1', ips: ['192.168.1.5'] });
    t.false(b.generated);
    t.is(b.certPem, a.certPem);
    const { X509Certificate } = await import('node:crypto');
    const c = new X509Certificate(a.certPem);
    t.regex(c.subjectAltName ?? '', /DNS:node-1/);
    t.regex(c.subjectAltName ?? '', /IP Address:192\.168\.1\.5/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('only masters and the API server read logs; callers without a cluster certificate are refused', async (t) => {
  const p = await certs();
  const locator: LogLocator = {
    containerLog: async () => {
      throw Object.assign(new Error('pod default/x is not running on this node'), { code: 404 });
    },
    containerRunning: async () => false,
  };
  const server = new LogServer({
    address: '127.0.0.1',
    port: 0,
    certPem: p.admin.certPem,
    keyPem: p.admin.keyPem,
    clientCaPem: p.ca.certPem,
    handler: containerLogHandler({ locator, clock: realClock }),
    log: new MemLog(),
  });
  const port = await server.start();
  try {
    t.is((await get(port, '/containerLogs/default/x/c')).status, 401);
    t.is((await get(port, '/containerLogs/default/x/c', p.foreign)).status, 401, 'a certificate from another CA');
    const denied = await get(port, '/containerLogs/default/x/c', p.stranger);
    t.is(denied.status, 403);
    t.regex(denied.body, /user=jane/);
    t.is((await get(port, '/containerLogs/default/x/c', p.admin)).status, 404);
    t.is((await get(port, '/containerLogs/default/x/c', p.apiserver)).status, 404);
    t.is((await get(port, '/pods', p.admin)).status, 404);
    t.is((await get(port, '/containerLogs/default/x/c?tailLines=abc', p.admin)).status, 400);
  } finally {
    await server.close();
  }
});

test('logs of a running container, tailLines, previous after a restart, and upstream errors for unknown pods and containers', async (t) => {
  const p = await certs();
  const h = await startHarness({ sim: { behaviours: [{ name: 'app', logLines: ['hello', 'from', 'the app'], exitAfterMs: 5000, exitCode: 1 }] } });
  const server = new LogServer({
    address: '127.0.0.1',
    port: 0,
    certPem: p.admin.certPem,
    keyPem: p.admin.keyPem,
    clientCaPem: p.ca.certPem,
    handler: containerLogHandler({ locator: h.mgr, clock: h.clock }),
    log: new MemLog(),
  });
  const port = await server.start();
  try {
    h.createPod('talk', { containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => isRunningReady(h.status('talk'))));
    const all = await get(port, '/containerLogs/default/talk/app', p.admin);
    t.is(all.status, 200);
    t.is(all.body, 'hello\nfrom\nthe app\n');
    t.is((await get(port, '/containerLogs/default/talk/app?tailLines=1', p.apiserver)).body, 'the app\n');
    const noPrev = await get(port, '/containerLogs/default/talk/app?previous=true', p.admin);
    t.is(noPrev.status, 400);
    t.is(noPrev.body, 'previous terminated container "app" in pod "talk" not found\n');
    t.true(await h.until(() => (h.status('talk')?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 20_000));
    const prev = await get(port, '/containerLogs/default/talk/app?previous=true&timestamps=true', p.admin);
    t.is(prev.status, 200);
    t.regex(prev.body, /^\S+Z hello\n/);
    const unknownPod = await get(port, '/containerLogs/default/nope/app', p.admin);
    t.is(unknownPod.status, 404);
    const unknownContainer = await get(port, '/containerLogs/default/talk/sidecar', p.admin);
    t.is(unknownContainer.status, 404);
    t.is(unknownContainer.body, 'container sidecar is not valid for pod talk\n');
  } finally {
    await server.close();
    await h.stop();
  }
});
