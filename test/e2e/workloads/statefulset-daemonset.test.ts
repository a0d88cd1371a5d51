/**
 * StatefulSets and DaemonSets end to end (issue 19): a real svc-apiserver, three real svc-node
 * agents on the CRI simulator, and kubectl 1.32 (apply, patch, set image, taint, rollout
 * status|history|undo, get). A pod watch records the order in which the controllers acted.
 */
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl as runKubectl, kubectlOk } from '../../helpers/real-clients';
import { eventually, startAgent, type AgentProcess } from '../agent/agent-process';

const NS = 'wl';
const NODES = ['wl-a', 'wl-b', 'wl-c'];

interface PodEvent {
  type: string;
  name: string;
  ready: boolean;
  deleting: boolean;
}

let api: RunningApiServer;
let dir: string;
const agents: AgentProcess[] = [];
const events: PodEvent[] = [];
const stopWatch = new AbortController();

function kubectl(...args: string[]): Promise<string> {
  return kubectlOk(api.kubeconfig, args, { timeoutMs: 120_000 });
}

async function apply(manifest: object): Promise<string> {
  const r = await runKubectl(api.kubeconfig, ['apply', '-f', '-'], { input: JSON.stringify(manifest), timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`kubectl apply exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

const getJson = async <T = any>(...args: string[]): Promise<T> => JSON.parse(await kubectl(...args, '-o', 'json')) as T;
const podsJson = async () => (await getJson<{ items: any[] }>('get', 'pods', '-n', NS)).items;

/** Follows the namespace's pods from now on, recording each event's pod, readiness and deletion. */
async function watchPods(): Promise<void> {
  const res = await request(`${api.url}/api/v1/namespaces/${NS}/pods?watch=1`, { dispatcher: api.admin, signal: stopWatch.signal });
  let buf = '';
  try {
    for await (const chunk of res.body) {
      buf += (chunk as Buffer).toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.trim()) continue;
        const ev = JSON.parse(line) as { type: string; object: any };
        const ready = (ev.object.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
        events.push({ type: ev.type, name: ev.object.metadata.name, ready, deleting: !!ev.object.metadata.deletionTimestamp });
      }
    }
  } catch {
    // stopped by the after hook
  }
}

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-workloads-'));
  api = await startApiServer();
  for (const name of NODES) agents.push(startAgent({ dir: join(dir, name), nodeName: name, kubeconfig: api.kubeconfig, configLines: ['nodeStatusUpdateFrequency: 1s'] }));
  await Promise.all(agents.map((a) => a.waitForLog('node registered and heartbeating', 60_000)));
  await eventually('three Ready nodes', async () => {
    const nodes = (await getJson<{ items: any[] }>('get', 'nodes')).items;
    return nodes.filter((n) => n.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True')).length === 3 ? true : undefined;
  }, 60_000);
  await kubectl('create', 'namespace', NS);
  void watchPods();
});

test.after.always(async () => {
  stopWatch.abort();
  await Promise.all(agents.map((a) => a.stop('SIGKILL')));
  await api?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const template = (app: string, image: string, extra: Record<string, unknown> = {}) => ({
  metadata: { labels: { app } },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: app, image, ...extra }] },
});

const image = (p: any): string => p.spec.containers[0].image;

test.serial('DaemonSet: one pod per node but the tainted one; rollout status, set image, history and undo', async (t) => {
  await kubectl('taint', 'nodes', 'wl-c', 'dedicated=infra:NoSchedule');
  await apply({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent', namespace: NS }, spec: { selector: { matchLabels: { app: 'agent' } }, template: template('agent', 'svc.local/agent:1') } });
  t.regex(await kubectl('rollout', 'status', 'daemonset/agent', '-n', NS, '--timeout=90s'), /daemon set "agent" successfully rolled out/);
  const pods = await podsJson();
  t.deepEqual(pods.map((p) => p.spec.nodeName).sort(), ['wl-a', 'wl-b']);
  t.true(pods.every((p) => p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0] === p.spec.nodeName));
  const table = await kubectl('get', 'daemonset', 'agent', '-n', NS);
  t.regex(table, /NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE/);
  t.regex(table, /agent\s+2\s+2\s+2\s+2\s+2\s+<none>/);
  await kubectl('set', 'image', 'daemonset/agent', 'agent=svc.local/agent:2', '-n', NS);
  t.regex(await kubectl('rollout', 'status', 'daemonset/agent', '-n', NS, '--timeout=90s'), /successfully rolled out/);
  await eventually('agent:2 on both nodes', async () => {
    const live = (await podsJson()).filter((p) => !p.metadata.deletionTimestamp);
    return live.length === 2 && live.every((p) => image(p) === 'svc.local/agent:2') ? true : undefined;
  });
  const history = await kubectl('rollout', 'history', 'daemonset/agent', '-n', NS);
  t.regex(history, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
  t.regex(await kubectl('rollout', 'history', 'daemonset/agent', '-n', NS, '--revision=1'), /Image:\s+svc\.local\/agent:1/);
  // As a user with the namespace's edit role (upstream's aggregated roles cover daemonsets and controllerrevisions).
  const denied = await runKubectl(api.kubeconfig, ['rollout', 'undo', 'daemonset/agent', '-n', NS, '--as=jane'], { timeoutMs: 30_000 });
  t.regex(denied.stderr, /Forbidden|forbidden/, 'not before the binding');
  await kubectl('create', 'rolebinding', 'jane-edit', '--clusterrole=edit', '--user=jane', '-n', NS);
  t.regex(await kubectl('rollout', 'history', 'daemonset/agent', '-n', NS, '--as=jane'), /REVISION/);
  t.regex(await kubectl('rollout', 'undo', 'daemonset/agent', '-n', NS, '--as=jane'), /daemonset.apps\/agent rolled back/);
  t.regex(await kubectl('rollout', 'status', 'daemonset/agent', '-n', NS, '--timeout=90s'), /successfully rolled out/);
  await eventually('agent:1 again', async () => {
    const live = (await podsJson()).filter((p) => !p.metadata.deletionTimestamp);
    return live.length === 2 && live.every((p) => image(p) === 'svc.local/agent:1') ? true : undefined;
  });
  // The rolled-back revision is renumbered above the others, as upstream.
  t.regex(await kubectl('rollout', 'history', 'daemonset/agent', '-n', NS), /\n2\s+<none>\n3\s+<none>/);
  await kubectl('delete', 'daemonset', 'agent', '-n', NS, '--cascade=foreground', '--timeout=60s');
  await eventually('daemon pods gone', async () => ((await podsJson()).length === 0 ? true : undefined), 60_000);
});

/** Waits for the rollout to be complete in the set's status: the update revision is current, every replica ready. */
async function revisionsConverged(): Promise<void> {
  await eventually('current revision = update revision', async () => {
    const s = (await getJson('get', 'statefulset', 'web', '-n', NS)).status;
    return s.currentRevision === s.updateRevision && s.readyReplicas === 3 && s.currentReplicas === 3 ? true : undefined;
  });
}

/** Index of the first recorded event satisfying pred (-1 if none). */
const firstEvent = (pred: (e: PodEvent) => boolean) => events.findIndex(pred);

test.serial('StatefulSet: 0 → 3 in order, a partitioned rolling update, rollout status, history and undo, then 3 → 0 in reverse', async (t) => {
  await apply({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: NS },
    spec: { replicas: 0, serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template: template('web', 'svc.local/web:1') },
  });
  const start = events.length;
  await kubectl('scale', 'statefulset', 'web', '-n', NS, '--replicas=3');
  // The defaulted rollingUpdate.partition (0) makes kubectl report a RollingUpdate set as partitioned, as it does against upstream.
  t.regex(await kubectl('rollout', 'status', 'statefulset/web', '-n', NS, '--timeout=120s'), /Waiting for \d pods to be ready\.\.\.[\s\S]*partitioned roll out complete: 3 new pods have been updated\.\.\./);
  await revisionsConverged();
  // OrderedReady: web-i appears only after web-(i-1) was reported Ready.
  for (const i of [1, 2]) {
    const made = firstEvent((e) => e.name === `web-${i}` && e.type === 'ADDED');
    const readyBefore = firstEvent((e) => e.name === `web-${i - 1}` && e.ready);
    t.true(readyBefore >= start && made > readyBefore, `web-${i} made after web-${i - 1} was Ready`);
  }
  t.regex(await kubectl('get', 'statefulset', 'web', '-n', NS), /web\s+3\/3\s+/);
  const web0 = (await podsJson()).find((p) => p.metadata.name === 'web-0');
  t.is(web0.metadata.labels['statefulset.kubernetes.io/pod-name'], 'web-0');
  t.is(web0.metadata.labels['apps.kubernetes.io/pod-index'], '0');
  t.is(web0.spec.hostname, 'web-0');
  t.is(web0.spec.subdomain, 'web');

  // A partition of 2 updates web-2 only.
  await kubectl('patch', 'statefulset', 'web', '-n', NS, '--type=merge', '-p', '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}');
  await kubectl('set', 'image', 'statefulset/web', 'web=svc.local/web:2', '-n', NS);
  t.regex(await kubectl('rollout', 'status', 'statefulset/web', '-n', NS, '--timeout=120s'), /partitioned roll out complete: 1 new pods have been updated\.\.\./);
  const byName = async () => Object.fromEntries((await podsJson()).map((p) => [p.metadata.name, image(p)]));
  t.deepEqual(await byName(), { 'web-0': 'svc.local/web:1', 'web-1': 'svc.local/web:1', 'web-2': 'svc.local/web:2' });
  await kubectl('patch', 'statefulset', 'web', '-n', NS, '--type=merge', '-p', '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}');
  t.regex(await kubectl('rollout', 'status', 'statefulset/web', '-n', NS, '--timeout=120s'), /partitioned roll out complete: 3 new pods have been updated\.\.\./);
  await revisionsConverged();
  t.deepEqual(await byName(), { 'web-0': 'svc.local/web:2', 'web-1': 'svc.local/web:2', 'web-2': 'svc.local/web:2' });
  t.regex(await kubectl('rollout', 'history', 'statefulset/web', '-n', NS), /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
  t.regex(await kubectl('get', 'controllerrevisions', '-n', NS), /web-[a-z0-9]+\s+statefulset\.apps\/web\s+2\s+/);
  t.regex(await kubectl('rollout', 'undo', 'statefulset/web', '-n', NS), /statefulset.apps\/web rolled back/);
  t.regex(await kubectl('rollout', 'status', 'statefulset/web', '-n', NS, '--timeout=120s'), /partitioned roll out complete: 3 new pods have been updated\.\.\./);
  await revisionsConverged();
  t.deepEqual(await byName(), { 'web-0': 'svc.local/web:1', 'web-1': 'svc.local/web:1', 'web-2': 'svc.local/web:1' });

  // Scale to 0: web-2 goes first, and each next one only once the one above it is gone.
  const down = events.length;
  await kubectl('scale', 'statefulset/web', '-n', NS, '--replicas=0');
  await eventually('no web pods', async () => ((await podsJson()).some((p) => p.metadata.name.startsWith('web-')) ? undefined : true), 90_000);
  const after = (pred: (e: PodEvent) => boolean) => events.findIndex((e, i) => i >= down && pred(e));
  for (const i of [1, 0]) {
    const deleting = after((e) => e.name === `web-${i}` && e.deleting);
    const gone = after((e) => e.name === `web-${i + 1}` && e.type === 'DELETED');
    t.true(gone >= 0 && deleting > gone, `web-${i} deleted after web-${i + 1} was gone`);
  }
});

test.serial('delete --cascade=orphan leaves the pods and revisions ownerless; a new set of that name adopts them', async (t) => {
  const manifest = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'orph', namespace: NS },
    spec: { replicas: 2, podManagementPolicy: 'Parallel', serviceName: 'orph', selector: { matchLabels: { app: 'orph' } }, template: template('orph', 'svc.local/orph:1') },
  };
  await apply(manifest);
  await eventually('two orph pods', async () => ((await podsJson()).filter((p) => p.metadata.name.startsWith('orph-')).length === 2 ? true : undefined));
  const first = (await getJson('get', 'statefulset', 'orph', '-n', NS)).metadata.uid;
  await kubectl('delete', 'statefulset', 'orph', '-n', NS, '--cascade=orphan');
  const ownerless = await eventually('pods released', async () => {
    const pods = (await podsJson()).filter((p) => p.metadata.name.startsWith('orph-'));
    return pods.length === 2 && pods.every((p) => !p.metadata.ownerReferences?.length) ? pods : undefined;
  });
  const uids = ownerless.map((p) => p.metadata.uid).sort();
  const revs = (await getJson<{ items: any[] }>('get', 'controllerrevisions', '-n', NS, '-l', 'app=orph')).items;
  t.is(revs.length, 1);
  t.deepEqual(revs[0].metadata.ownerReferences ?? [], []);
  await apply(manifest);
  const second = (await getJson('get', 'statefulset', 'orph', '-n', NS)).metadata.uid;
  t.not(second, first);
  const adopted = await eventually('pods adopted', async () => {
    const pods = (await podsJson()).filter((p) => p.metadata.name.startsWith('orph-'));
    return pods.length === 2 && pods.every((p) => p.metadata.ownerReferences?.[0]?.uid === second) ? pods : undefined;
  });
  t.deepEqual(adopted.map((p) => p.metadata.uid).sort(), uids, 'the same pods, not new ones');
  await eventually('revision adopted', async () => {
    const r = (await getJson<{ items: any[] }>('get', 'controllerrevisions', '-n', NS, '-l', 'app=orph')).items;
    return r.length === 1 && r[0].metadata.ownerReferences?.[0]?.uid === second ? true : undefined;
  });
  await kubectl('delete', 'statefulset', 'orph', '-n', NS, '--timeout=60s');
  await eventually('orph pods gone (background cascade)', async () => ((await podsJson()).some((p) => p.metadata.name.startsWith('orph-')) ? undefined : true), 60_000);
});

test.serial('volumeClaimTemplates: a claim per ordinal (Pending: no class and no volume can bind them) and pod volumes naming them', async (t) => {
  await apply({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'data', namespace: NS },
    spec: {
      replicas: 2,
      podManagementPolicy: 'Parallel',
      serviceName: 'data',
      selector: { matchLabels: { app: 'data' } },
      template: template('data', 'svc.local/db:1', { volumeMounts: [{ name: 'store', mountPath: '/var/lib/db' }] }),
      // No class (not the default local-path class, whose volumes would bind): the claims stay Pending.
      volumeClaimTemplates: [{ metadata: { name: 'store' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', resources: { requests: { storage: '1Gi' } } } }],
    },
  });
  const claims = await eventually('two claims', async () => {
    const items = (await getJson<{ items: any[] }>('get', 'pvc', '-n', NS)).items;
    return items.length === 2 ? items : undefined;
  });
  t.deepEqual(claims.map((c) => c.metadata.name).sort(), ['store-data-0', 'store-data-1']);
  t.true(claims.every((c) => c.status.phase === 'Pending' && c.metadata.labels.app === 'data'));
  const pods = await eventually('two pods', async () => {
    const items = (await podsJson()).filter((p) => p.metadata.name.startsWith('data-'));
    return items.length === 2 ? items : undefined;
  });
  for (const p of pods) {
    const volume = p.spec.volumes.find((v: any) => v.name === 'store');
    t.deepEqual(volume.persistentVolumeClaim, { claimName: `store-${p.metadata.name}` });
  }
  // The scheduler keeps pods with unbound Immediate claims unscheduled, with upstream's reason.
  const unscheduled = await eventually('pods unschedulable', async () => {
    const items = (await podsJson()).filter((p) => p.metadata.name.startsWith('data-'));
    const why = (p: any) => (p.status.conditions ?? []).find((c: any) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')?.message;
    return items.length === 2 && items.every((p) => why(p)) ? items.map(why) : undefined;
  });
  t.true(unscheduled.every((m: string) => /pod has unbound immediate PersistentVolumeClaims/.test(m)));
  t.true(claims.every((c) => c.spec.storageClassName === ''));
  // Retain/Retain: deleting the set leaves the claims.
  await kubectl('delete', 'statefulset', 'data', '-n', NS, '--timeout=60s');
  await eventually('data pods gone', async () => ((await podsJson()).some((p) => p.metadata.name.startsWith('data-')) ? undefined : true), 60_000);
  t.is((await getJson<{ items: any[] }>('get', 'pvc', '-n', NS)).items.length, 2);
});
