import test from 'ava';
import { Etcd3 } from 'etcd3';
import { randomBytes, webcrypto } from 'node:crypto';
import { x509 } from '../../../common/x509';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { startEtcdCluster, type EtcdCluster } from '../../helpers/etcd-cluster';
import { call, type JsonResponse } from '../../helpers/http';

// Issue 15 point 2: every control loop follows the store through one informer, which lists again
// whenever its watch ends. Here the watches end in the three ways they do in production, and every
// loop is shown to act afterwards:
// (a) the informers' own watch timeout, set to 1 s (--controller-watch-timeout), on SQLite;
// (c) a restart of the etcd member the server talks to;
// (b) an etcd compaction while the server cannot see etcd: when it can again, the watch cache's
//     history is gone, every informer's watch ends with 410 and lists again.
// No agent runs: nodes are API objects. Waits poll for conditions; nothing sleeps a fixed time.

const GRACE = '4s'; // --node-monitor-grace-period: a silent node is marked within seconds
// --event-ttl: an event expires within seconds.
const COMMON = ['--enable-bootstrap-token-auth', `--node-monitor-grace-period=${GRACE}`, '--event-ttl=2s', '--log-level=info'];

let cluster: EtcdCluster | undefined;
let etcdServer: RunningApiServer | undefined;
let sqliteServer: RunningApiServer | undefined;

test.after.always(async () => {
  await sqliteServer?.stop();
  await etcdServer?.stop();
  await cluster?.close();
});

/** Polls fn every 100 ms until it returns something other than undefined/false; throws after timeoutMs naming what. */
async function eventually<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function must(r: JsonResponse, what: string, ok = [200, 201]): JsonResponse {
  if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
}

/** Store list calls per object type so far (etcd_request_duration_seconds_count{operation="list"}): informers list again after every watch end. */
async function listCounts(s: RunningApiServer): Promise<Map<string, number>> {
  const r = must(await call(s.admin, 'GET', `${s.url}/metrics`), 'metrics');
  const out = new Map<string, number>();
  for (const m of r.text.matchAll(/^etcd_request_duration_seconds_count\{([^}]*)\} (\d+)/gm)) {
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (labels.operation === 'list') out.set(labels.type, Number(m[2]));
  }
  return out;
}

/** Types that only informers list (the test itself never lists them). */
const INFORMER_TYPES = ['nodes', 'certificatesigningrequests.certificates.svc.io', 'clusterroles.rbac.authorization.svc.io', 'leases.coordination.svc.io', 'serviceaccounts', 'poddisruptionbudgets.policy', 'deployments.apps', 'replicasets.apps', 'statefulsets.apps', 'daemonsets.apps', 'jobs.batch'];

async function waitForRelists(s: RunningApiServer, times: number): Promise<void> {
  const before = await listCounts(s);
  await eventually(`every informer type listed ${times} more times`, async () => {
    const now = await listCounts(s);
    return INFORMER_TYPES.every((t) => (now.get(t) ?? 0) - (before.get(t) ?? 0) >= times);
  });
}

async function readyz(s: RunningApiServer): Promise<void> {
  await eventually('readyz', async () => (await call(s.admin, 'GET', `${s.url}/readyz`)).status === 200);
}

async function requestPem(subject: string): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']));
  return (await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: alg })).toString('pem');
}

const tokenId = () => randomBytes(3).toString('hex');
const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z');
const condition = (o: JsonResponse, type: string) => ((o.body?.status?.conditions ?? []) as Array<{ type: string; status: string }>).find((c) => c.type === type);

/**
 * Makes every control loop act once (all at the same time) and waits until each has; resolves with
 * how long each took. `round` makes the names unique.
 */
async function everyLoopActs(s: RunningApiServer, round: string): Promise<Record<string, number>> {
  const api = `${s.url}/api/v1`;
  const post = async (path: string, body: unknown, what: string) => must(await call(s.admin, 'POST', `${s.url}${path}`, body), what);
  const get = (path: string) => call(s.admin, 'GET', `${s.url}${path}`);
  const ns = `wt-${round}`;
  await post('/api/v1/namespaces', { metadata: { name: ns } }, 'namespace');
  const timed = async (name: string, fn: () => Promise<unknown>): Promise<[string, number]> => {
    const t0 = Date.now();
    await fn();
    return [name, Date.now() - t0];
  };
  // Pods need the namespace's default service account (ServiceAccount admission).
  const serviceAccount = eventually('service account default', async () => (await get(`/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200);

  const loops: Array<Promise<[string, number]>> = [
    timed('service accounts', () => serviceAccount),
    timed('root CA publisher', async () => {
      const path = `/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`;
      const first = await eventually('kube-root-ca.crt', async () => {
        const r = await get(path);
        return r.status === 200 && r;
      });
      must(await call(s.admin, 'DELETE', `${s.url}${path}`), 'delete kube-root-ca.crt');
      await eventually('kube-root-ca.crt re-created', async () => {
        const r = await get(path);
        return r.status === 200 && r.body.metadata.uid !== first.body.metadata.uid;
      });
    }),
    timed('namespace deletion', async () => {
      const gone = `wt-${round}-gone`;
      await post('/api/v1/namespaces', { metadata: { name: gone } }, 'namespace to delete');
      await post(`/api/v1/namespaces/${gone}/configmaps`, { metadata: { name: 'content' } }, 'content');
      must(await call(s.admin, 'DELETE', `${api}/namespaces/${gone}`), 'delete namespace');
      await eventually('the namespace emptied and removed', async () => (await get(`/api/v1/namespaces/${gone}`)).status === 404);
    }),
    timed('garbage collector', async () => {
      const owner = await post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'owner' } }, 'owner');
      await post(
        `/api/v1/namespaces/${ns}/configmaps`,
        { metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.body.metadata.uid }] } },
        'dependent',
      );
      must(await call(s.admin, 'DELETE', `${api}/namespaces/${ns}/configmaps/owner`), 'delete owner');
      await eventually('the dependent collected', async () => (await get(`/api/v1/namespaces/${ns}/configmaps/dependent`)).status === 404);
    }),
    timed('node lifecycle', async () => {
      const name = `wt-${round}-silent`;
      await post('/api/v1/nodes', { metadata: { name } }, 'silent node');
      await eventually('the silent node marked Unknown', async () => condition(await get(`/api/v1/nodes/${name}`), 'Ready')?.status === 'Unknown');
    }),
    timed('taint eviction', async () => {
      const node = `wt-${round}-tainted`;
      await post('/api/v1/nodes', { metadata: { name: node }, spec: { taints: [{ key: 'example.com/evict', effect: 'NoExecute' }] } }, 'tainted node');
      await serviceAccount;
      await post(`/api/v1/namespaces/${ns}/pods`, { metadata: { name: 'evicted' }, spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox:1.36' }] } }, 'pod on the tainted node');
      await eventually('the pod evicted', async () => {
        const r = await get(`/api/v1/namespaces/${ns}/pods/evicted`);
        return r.status === 404 || (r.status === 200 && !!r.body.metadata.deletionTimestamp && condition(r, 'DisruptionTarget')?.status === 'True');
      });
    }),
    timed('scheduler', async () => {
      const node = `wt-${round}-ready`;
      const allocatable = { cpu: '2', memory: '4Gi', pods: '10' };
      await post(
        '/api/v1/nodes',
        {
          metadata: { name: node, labels: { 'svc.io/hostname': node } },
          status: { capacity: allocatable, allocatable, conditions: [{ type: 'Ready', status: 'True', reason: 'SvcNodeReady', message: 'test node', lastHeartbeatTime: rfc3339(new Date()) }] },
        },
        'ready node',
      );
      await serviceAccount;
      await post(`/api/v1/namespaces/${ns}/pods`, { metadata: { name: 'scheduled' }, spec: { nodeSelector: { 'svc.io/hostname': node }, containers: [{ name: 'c', image: 'busybox:1.36' }] } }, 'pending pod');
      await eventually('the pod bound', async () => (await get(`/api/v1/namespaces/${ns}/pods/scheduled`)).body?.spec?.nodeName === node);
    }),
    timed('token cleaner', async () => {
      const id = tokenId();
      await post('/api/v1/namespaces/svc-system/secrets', {
        metadata: { name: `bootstrap-token-${id}` },
        type: 'bootstrap.svc.io/token',
        stringData: { 'token-id': id, 'token-secret': randomBytes(8).toString('hex'), expiration: rfc3339(new Date(Date.now() - 60_000)), 'usage-bootstrap-authentication': 'true' },
      }, 'expired token');
      await eventually('the expired token removed', async () => (await get(`/api/v1/namespaces/svc-system/secrets/bootstrap-token-${id}`)).status === 404);
    }),
    timed('bootstrap signer, CSR approval and signing', async () => {
      const id = tokenId();
      const secret = randomBytes(8).toString('hex');
      await post('/api/v1/namespaces/svc-system/secrets', {
        metadata: { name: `bootstrap-token-${id}` },
        type: 'bootstrap.svc.io/token',
        stringData: { 'token-id': id, 'token-secret': secret, expiration: rfc3339(new Date(Date.now() + 3600_000)), 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true' },
      }, 'signing token');
      await eventually('cluster-info signed for the token', async () => !!(await get('/api/v1/namespaces/svc-public/configmaps/cluster-info')).body?.data?.[`jws-kubeconfig-${id}`]);
      // A joining node's CSR, sent with the bootstrap token: approved, then signed.
      const csr = `wt-${round}-csr`;
      const body = {
        apiVersion: 'certificates.svc.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: csr },
        spec: { request: Buffer.from(await requestPem(`O=system:nodes, CN=system:node:wt-${round}`)).toString('base64'), signerName: 'svc.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] },
      };
      must(await call(s.anonymous, 'POST', `${s.url}/apis/certificates.svc.io/v1/certificatesigningrequests`, body, { authorization: `Bearer ${id}.${secret}` }), 'CSR');
      await eventually('the CSR approved and signed', async () => {
        const r = await get(`/apis/certificates.svc.io/v1/certificatesigningrequests/${csr}`);
        return condition(r, 'Approved')?.status === 'True' && typeof r.body.status?.certificate === 'string';
      });
    }),
    timed('event TTL', async () => {
      const event = `wt-${round}-event`;
      const body = { metadata: { name: event }, involvedObject: { kind: 'Pod', namespace: ns, name: 'x' }, reason: 'Testing', message: 'expires', type: 'Normal' };
      await post(`/api/v1/namespaces/${ns}/events`, body, 'event');
      await eventually('the event expired', async () => (await get(`/api/v1/namespaces/${ns}/events/${event}`)).status === 404);
    }),
    timed('disruption', async () => {
      const pdbs = `${s.url}/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`;
      await post(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, { metadata: { name: 'budget' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'none' } } } }, 'budget');
      await eventually('the budget computed', async () => (await call(s.admin, 'GET', `${pdbs}/budget`)).body?.status?.observedGeneration === 1);
    }),
    timed('resource quota', async () => {
      await post(`/api/v1/namespaces/${ns}/resourcequotas`, { metadata: { name: 'quota' }, spec: { hard: { 'count/secrets': '100' } } }, 'quota');
      await eventually('the quota counted', async () => (await get(`/api/v1/namespaces/${ns}/resourcequotas/quota`)).body?.status?.used?.['count/secrets'] !== undefined);
    }),
    timed('deployment and replica set', async () => {
      await serviceAccount;
      const template = { metadata: { labels: { app: 'wt' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } };
      await post(`/apis/apps/v1/namespaces/${ns}/deployments`, { metadata: { name: 'wt' }, spec: { replicas: 1, selector: { matchLabels: { app: 'wt' } }, template } }, 'deployment');
      // The Deployment controller makes its ReplicaSet; the ReplicaSet controller makes the pod.
      await eventually('the deployment\'s pod created', async () => {
        const pods = (await get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dwt`)).body?.items ?? [];
        return pods.length === 1 && pods[0].metadata.ownerReferences?.[0]?.kind === 'ReplicaSet';
      });
    }),
    timed('statefulset', async () => {
      await serviceAccount;
      const template = { metadata: { labels: { app: 'wt-sts' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } };
      await post(`/apis/apps/v1/namespaces/${ns}/statefulsets`, { metadata: { name: 'wt-sts' }, spec: { replicas: 1, serviceName: 'wt-sts', selector: { matchLabels: { app: 'wt-sts' } }, template } }, 'statefulset');
      await eventually('the statefulset\'s ordinal pod created', async () => (await get(`/api/v1/namespaces/${ns}/pods/wt-sts-0`)).body?.metadata?.ownerReferences?.[0]?.kind === 'StatefulSet');
    }),
    timed('daemonset', async () => {
      await serviceAccount;
      // A node of this round only: the DaemonSet selects it by a label no other node has.
      const node = `wt-${round}-ds`;
      const label = { 'wt.example.com/ds': round };
      await post('/api/v1/nodes', { metadata: { name: node, labels: label } }, 'daemon node');
      const template = { metadata: { labels: { app: 'wt-ds' } }, spec: { nodeSelector: label, containers: [{ name: 'c', image: 'busybox:1.36' }] } };
      await post(`/apis/apps/v1/namespaces/${ns}/daemonsets`, { metadata: { name: 'wt-ds' }, spec: { selector: { matchLabels: { app: 'wt-ds' } }, template } }, 'daemonset');
      await eventually('the daemon pod made for the node', async () => {
        const pods = (await get(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dwt-ds`)).body?.items ?? [];
        return pods.length === 1 && JSON.stringify(pods[0].spec?.affinity ?? {}).includes(node);
      });
    }),
    timed('job', async () => {
      await serviceAccount;
      const template = { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } };
      await post(`/apis/batch/v1/namespaces/${ns}/jobs`, { metadata: { name: 'wt-job' }, spec: { template } }, 'job');
      await eventually('the job\'s pod created', async () => {
        const pods = (await get(`/api/v1/namespaces/${ns}/pods?labelSelector=job-name%3Dwt-job`)).body?.items ?? [];
        return pods.length === 1 && pods[0].metadata.ownerReferences?.[0]?.kind === 'Job';
      });
    }),
    timed('RBAC aggregation', async () => {
      const rbac = `${s.url}/apis/rbac.authorization.svc.io/v1/clusterroles`;
      const label = { 'wt.example.com/aggregate': round };
      must(await call(s.admin, 'POST', rbac, { metadata: { name: `wt-${round}-aggregate` }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: label }] } }), 'aggregating role');
      must(await call(s.admin, 'POST', rbac, { metadata: { name: `wt-${round}-part`, labels: label }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] }), 'part role');
      await eventually('the rules aggregated', async () => (await call(s.admin, 'GET', `${rbac}/wt-${round}-aggregate`)).body?.rules?.[0]?.resources?.[0] === 'configmaps');
    }),
  ];
  return Object.fromEntries(await Promise.all(loops));
}

const LOOPS = [
  'RBAC aggregation',
  'bootstrap signer, CSR approval and signing',
  'daemonset',
  'deployment and replica set',
  'disruption',
  'event TTL',
  'garbage collector',
  'job',
  'namespace deletion',
  'node lifecycle',
  'resource quota',
  'root CA publisher',
  'scheduler',
  'service accounts',
  'statefulset',
  'taint eviction',
  'token cleaner',
];

const expiredLines = (s: RunningApiServer) => s.output().split('\n').filter((l) => l.includes('watch expired (410)')).length;

test.serial('SQLite, watches ending every 1-2 s (--controller-watch-timeout=1s): every loop still acts', async (t) => {
  const started = Date.now();
  sqliteServer = await startApiServer({ args: [...COMMON, '--controller-watch-timeout=1s'] });
  await waitForRelists(sqliteServer, 3);
  const took = await everyLoopActs(sqliteServer, 's1');
  await waitForRelists(sqliteServer, 2); // and the watches keep ending
  t.log(`loops acted (ms): ${JSON.stringify(took)}; test took ${Date.now() - started} ms`);
  t.deepEqual(Object.keys(took).sort(), LOOPS);
  await sqliteServer.stop();
  sqliteServer = undefined;
});

test.serial('etcd: after a restart of the member the server uses, and after a compaction while it was away (410 to every informer), every loop acts', async (t) => {
  const started = Date.now();
  cluster = await startEtcdCluster({ size: 3 });
  // One endpoint, so stopping that member cuts the server off; watches long enough to outlive the outage.
  const endpoint = cluster.endpoints()[0];
  etcdServer = await startApiServer({ args: [...COMMON, `--etcd-servers=${endpoint}`, '--controller-watch-timeout=1m'] });
  const s = etcdServer;
  const first = await everyLoopActs(s, 'e0');
  t.deepEqual(Object.keys(first).sort(), LOOPS);
  t.log(`first round: ${JSON.stringify(first)}`);

  // (c) The member restarts: the store watch resumes from its last revision.
  await cluster.stop(0);
  await cluster.start(0);
  await cluster.waitHealthy();
  await readyz(s);
  const afterRestart = await everyLoopActs(s, 'e1');
  t.deepEqual(Object.keys(afterRestart).sort(), LOOPS);
  t.log(`after the member restart: ${JSON.stringify(afterRestart)}`);

  // (b) Writes and a compaction on the other members while the server's member is down: the
  // store watch cannot resume, the watch cache starts over and ends every watch with 410.
  const before = expiredLines(s);
  await cluster.stop(0);
  const raw = new Etcd3({ hosts: cluster.endpoints().slice(1) });
  try {
    let revision = 0;
    for (let i = 0; i < 3; i++) revision = Number((await raw.put(`/wt-filler/${i}`).value('x').exec()).header.revision);
    await raw.kv.compact({ revision, physical: true });
  } finally {
    raw.close();
  }
  await cluster.start(0);
  await cluster.waitHealthy();
  const expired = await eventually('informers told 410', () => {
    const n = expiredLines(s) - before;
    return Promise.resolve(n >= 10 && n);
  });
  await readyz(s);
  t.log(`${expired} informer watches ended with 410`);
  t.true(expired >= 10);
  const afterCompaction = await everyLoopActs(s, 'e2');
  t.deepEqual(Object.keys(afterCompaction).sort(), LOOPS);
  t.log(`after the compaction: ${JSON.stringify(afterCompaction)}`);
  t.log(`test took ${Date.now() - started} ms`);
});
