import test from 'ava';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { startEtcd, type RunningEtcd } from '../../helpers/etcd-process';
import { call } from '../../helpers/http';

// Several svc-apiserver processes on one etcd (issue 7, point 2).
let etcd: RunningEtcd;
let a: RunningApiServer;
let b: RunningApiServer;
const dirs: string[] = [];
const election = ['--leader-elect-lease-duration=4s', '--leader-elect-renew-deadline=3s', '--leader-elect-retry-period=500ms'];

test.before(async () => {
  etcd = await startEtcd();
  const dA = mkdtempSync(join(tmpdir(), 'svc-rep-a-'));
  const dB = mkdtempSync(join(tmpdir(), 'svc-rep-b-'));
  dirs.push(dA, dB);
  a = await startApiServer({ dataDir: dA, args: [`--etcd-servers=${etcd.endpoint}`, ...election] });
  // Replicas of one cluster share one CA (as kubeadm copies /etc/kubernetes/pki to every control-plane node).
  mkdirSync(join(dB, 'pki'), { mode: 0o700 });
  for (const f of ['ca.crt', 'ca.key', 'admin.crt', 'admin.key']) cpSync(join(dA, 'pki', f), join(dB, 'pki', f));
  await waitForLeader(a);
  b = await startApiServer({ dataDir: dB, args: [`--etcd-servers=${etcd.endpoint}`, ...election] });
});

test.after.always(async () => {
  await a?.stop();
  await b?.stop();
  await etcd?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function lease(s: RunningApiServer) {
  return call(s.admin, 'GET', `${s.url}/apis/coordination.svc.io/v1/namespaces/svc-system/leases/svc-controller-manager`);
}

async function waitForLeader(s: RunningApiServer): Promise<string> {
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    const l = await lease(s);
    if (l.status === 200 && l.body.spec.holderIdentity) return l.body.spec.holderIdentity;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('no leader elected');
}

test.serial('a write through A is seen by a watch on B with the same resourceVersion', async (t) => {
  const start = (await call(b.admin, 'GET', `${b.url}/api/v1/namespaces/default/configmaps`)).body.metadata.resourceVersion;
  const res = await request(`${b.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${start}&timeoutSeconds=10`, { dispatcher: b.admin });
  const first = (async () => {
    let buf = '';
    for await (const chunk of res.body) {
      buf += chunk.toString();
      const i = buf.indexOf('\n');
      if (i >= 0) return JSON.parse(buf.slice(0, i));
    }
  })();
  const created = await call(a.admin, 'POST', `${a.url}/api/v1/namespaces/default/configmaps`, { metadata: { name: 'shared' }, data: { v: '1' } });
  t.is(created.status, 201);
  const ev = await first;
  res.body.destroy();
  t.is(ev.type, 'ADDED');
  t.is(ev.object.metadata.resourceVersion, created.body.metadata.resourceVersion);
  t.is(ev.object.metadata.uid, created.body.metadata.uid);
});

test.serial('optimistic concurrency across replicas: one PUT wins, the other gets 409', async (t) => {
  const cur = (await call(a.admin, 'GET', `${a.url}/api/v1/namespaces/default/configmaps/shared`)).body;
  const [ra, rb] = await Promise.all([
    call(a.admin, 'PUT', `${a.url}/api/v1/namespaces/default/configmaps/shared`, { ...cur, data: { v: 'a' } }),
    call(b.admin, 'PUT', `${b.url}/api/v1/namespaces/default/configmaps/shared`, { ...cur, data: { v: 'b' } }),
  ]);
  t.deepEqual([ra.status, rb.status].sort(), [200, 409]);
  const winner = ra.status === 200 ? 'a' : 'b';
  t.is((await call(b.admin, 'GET', `${b.url}/api/v1/namespaces/default/configmaps/shared`)).body.data.v, winner);
});

test.serial('control loops run on one replica and move when the leader dies', async (t) => {
  const first = await waitForLeader(b);
  // A started alone, so it leads; B must not have taken over while A is alive.
  await new Promise((r) => setTimeout(r, 2000));
  t.is((await lease(b)).body.spec.holderIdentity, first);
  a.proc.kill('SIGKILL');
  const killedAt = Date.now();
  let next = first;
  while (next === first && Date.now() - killedAt < 15_000) {
    await new Promise((r) => setTimeout(r, 250));
    next = (await lease(b)).body.spec.holderIdentity;
  }
  t.not(next, first, 'B should take the lease after A dies');
  t.log(`B took over ${Date.now() - killedAt} ms after A was killed (lease duration 4 s)`);
  // B now runs the controllers: a namespace deletion completes through it.
  await call(b.admin, 'POST', `${b.url}/api/v1/namespaces`, { metadata: { name: 'ha' } });
  await call(b.admin, 'POST', `${b.url}/api/v1/namespaces/ha/configmaps`, { metadata: { name: 'x' } });
  await call(b.admin, 'DELETE', `${b.url}/api/v1/namespaces/ha`);
  const end = Date.now() + 15_000;
  let gone = false;
  while (!gone && Date.now() < end) {
    gone = (await call(b.admin, 'GET', `${b.url}/api/v1/namespaces/ha`)).status === 404;
    if (!gone) await new Promise((r) => setTimeout(r, 200));
  }
  t.true(gone);
});
