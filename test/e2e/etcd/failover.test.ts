import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { startEtcdCluster, type EtcdCluster } from '../../helpers/etcd-cluster';
import { call } from '../../helpers/http';
import { eventually, startWriteLoad, summarize } from './load';

// Failover against a real 3-member etcd cluster on loopback (issue 7, point 3).
let cluster: EtcdCluster;
let server: RunningApiServer;

test.before(async () => {
  cluster = await startEtcdCluster({ size: 3 });
  server = await startApiServer({ args: [`--etcd-servers=${cluster.endpoints().join(',')}`] });
});

test.after.always(async () => {
  await server?.stop();
  await cluster?.close();
});

const cms = (ns = 'default') => `${server.url}/api/v1/namespaces/${ns}/configmaps`;

async function readyz(): Promise<{ status: number; text: string }> {
  const r = await call(server.admin, 'GET', `${server.url}/readyz?verbose`);
  return { status: r.status, text: r.text };
}

test.serial('one member stops in the middle of a write load: writes continue and every acknowledged write is kept', async (t) => {
  const load = startWriteLoad(server, { clients: 4, namespace: 'default', prefix: 'one' });
  t.true(await eventually(() => load.acked.length >= 40, 30_000, 50), 'the load did not get going');
  // The leader is the interesting member to lose: a new election happens under load.
  const victim = Math.max(0, await cluster.leader());
  await cluster.stop(victim);
  const stoppedAt = Date.now();
  const before = load.acked.length;
  t.true(await eventually(() => load.acked.filter((a) => a.at > stoppedAt).length >= 40, 30_000, 50), 'writes did not continue on two members');
  await load.stop();
  t.log(`member ${victim} (leader) stopped after ${before} writes; ${load.acked.length} acknowledged in all; failures: ${summarize(load.failed)}`);
  for (const f of load.failed) t.true(f.status >= 500 && f.status <= 599, `failure ${f.name}: ${f.status} ${f.reason}`);

  // Every acknowledged write is there with the resourceVersion and uid the client was given.
  const list = await call(server.admin, 'GET', cms());
  t.is(list.status, 200);
  const stored = new Map<string, { rv: string; uid: string }>();
  for (const item of list.body.items) stored.set(item.metadata.name, { rv: item.metadata.resourceVersion, uid: item.metadata.uid });
  const missing = load.acked.filter((a) => stored.get(a.name)?.rv !== a.resourceVersion || stored.get(a.name)?.uid !== a.uid);
  t.deepEqual(missing, [], 'acknowledged writes lost or changed');
  for (const a of load.acked.slice(-5)) {
    const g = await call(server.admin, 'GET', `${cms()}/${a.name}`);
    t.is(g.body.metadata.resourceVersion, a.resourceVersion);
  }

  await cluster.start(victim);
  await cluster.waitHealthy();
});

test.serial('a follower killed with SIGKILL under load: writes continue and every acknowledged write is kept', async (t) => {
  const load = startWriteLoad(server, { clients: 4, namespace: 'default', prefix: 'kill' });
  t.true(await eventually(() => load.acked.length >= 20, 30_000, 50), 'the load did not get going');
  const leader = await cluster.leader();
  const victim = leader === 0 ? 1 : 0;
  await cluster.kill9(victim);
  const killedAt = Date.now();
  t.true(await eventually(() => load.acked.filter((a) => a.at > killedAt).length >= 40, 30_000, 50), 'writes did not continue on two members');
  await load.stop();
  t.log(`member ${victim} killed; ${load.acked.length} acknowledged; failures: ${summarize(load.failed)}`);
  for (const f of load.failed) t.true(f.status >= 500 && f.status <= 599, `failure ${f.name}: ${f.status} ${f.reason}`);
  // The killed member comes back with its data directory and catches up; then every write is there.
  await cluster.start(victim);
  await cluster.waitHealthy();
  const list = await call(server.admin, 'GET', cms());
  const stored = new Map<string, string>(list.body.items.map((i: { metadata: { name: string; resourceVersion: string } }) => [i.metadata.name, i.metadata.resourceVersion]));
  t.deepEqual(load.acked.filter((a) => stored.get(a.name) !== a.resourceVersion), [], 'acknowledged writes lost or changed');
});

test.serial('two members stop: writes fail with a 5xx Status, readyz reports the etcd check failing, and all recovers', async (t) => {
  t.is((await readyz()).status, 200);
  await cluster.stop(1);
  await cluster.stop(2);

  // Each request completes (with an error) instead of hanging; a few at once, timed only for the log.
  const attempts = await Promise.all(
    [0, 1, 2].map(async (i) => {
      const started = Date.now();
      const r = await call(server.admin, 'POST', cms(), { metadata: { name: `quorum-lost-${i}` } });
      return { ...r, ms: Date.now() - started };
    }),
  );
  for (const r of attempts) {
    t.log(`write without quorum: ${r.status} ${r.body?.reason} in ${r.ms} ms: ${r.body?.message}`);
    t.true(r.status === 503 || r.status === 504, `expected 503 or 504, got ${r.status}`);
    t.is(r.body?.kind, 'Status');
    t.is(r.body?.status, 'Failure');
    t.is(r.body?.code, r.status);
  }
  const read = await call(server.admin, 'GET', `${cms()}/one-0-0`);
  t.log(`read without quorum: ${read.status} ${read.body?.reason}`);
  t.true(read.status === 503 || read.status === 504, `expected 503 or 504 for a read, got ${read.status}`);

  const asked = Date.now();
  const r = await readyz();
  t.log(`readyz without quorum: ${r.status} in ${Date.now() - asked} ms\n${r.text}`);
  t.is(r.status, 500);
  t.regex(r.text, /\[-\]etcd failed/);

  await cluster.start(1);
  await cluster.start(2);
  await cluster.waitHealthy();
  t.true(await eventually(async () => (await call(server.admin, 'POST', cms(), { metadata: { name: `recovered-${Date.now()}` } })).status === 201, 30_000), 'writes did not recover');
  t.true(await eventually(async () => (await readyz()).status === 200, 30_000), 'readyz did not recover');
  t.regex((await readyz()).text, /\[\+\]etcd ok/);
});
