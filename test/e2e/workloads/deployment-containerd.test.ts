/**
 * Issue 19 on real peers: a Deployment on the test's own containerd (test/helpers/containerd.ts)
 * rolls from one busybox tag to another, and at no moment seen on a watch of its pods are fewer
 * than replicas - maxUnavailable of them Ready. No registry is reachable here: the second tag is
 * the imported busybox image tagged again with ctr (the same content under another reference,
 * which is all a rollout needs: a different template).
 */
import test from 'ava';
import { request } from 'undici';
import { requireContainerdTools } from '../../helpers/containerd';
import { startContainerdNode, type ContainerdNode } from '../../helpers/containerd-node';
import { kubectl } from '../../helpers/real-clients';

const REPLICAS = 4;
const MAX_UNAVAILABLE = 1;
const V1 = 'svc.local/busybox:latest';
const V2 = 'svc.local/busybox:v2';

interface PodView {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { containers: Array<{ image: string }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

test('a Deployment rolls from one busybox tag to another without ever dropping below replicas - maxUnavailable Ready pods', async (t) => {
  t.timeout(240_000);
  requireContainerdTools();
  const node: ContainerdNode = await startContainerdNode({ nodeName: 'e2e-deploy' });
  const ac = new AbortController();
  t.teardown(async () => {
    ac.abort();
    await kubectl(node.api.kubeconfig, ['delete', 'deployment', 'web', '--ignore-not-found', '--wait=false']);
    await node.stop();
  });
  await node.ctrd.ctr('images', 'tag', V1, V2);
  const manifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: ${REPLICAS}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: ${MAX_UNAVAILABLE}}}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - {name: c, image: "${V1}", imagePullPolicy: Never, command: [sleep, "3600"]}
`;
  const applied = await kubectl(node.api.kubeconfig, ['apply', '-f', '-'], { input: manifest });
  t.is(applied.code, 0, applied.stderr);
  const first = await kubectl(node.api.kubeconfig, ['rollout', 'status', 'deployment/web', '--timeout=150s'], { timeoutMs: 160_000 });
  t.is(first.code, 0, `${first.stderr}\n${node.agent.output().slice(-3000)}`);

  // Every pod event from here on: the Ready, not terminating pods after each one.
  const pods = new Map<string, PodView>();
  let fewest = Infinity;
  let events = 0;
  const timeline: string[] = [];
  const readyNow = () => [...pods.values()].filter((p) => !p.metadata.deletionTimestamp && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).length;
  const res = await request(`${node.api.url}/api/v1/namespaces/default/pods?watch=true&labelSelector=app%3Dweb`, { dispatcher: node.api.admin, signal: ac.signal });
  t.is(res.statusCode, 200);
  let synced!: () => void;
  const initial = new Promise<void>((r) => (synced = r));
  void (async () => {
    let partial = '';
    try {
      for await (const chunk of res.body) {
        partial += (chunk as Buffer).toString('utf8');
        let nl: number;
        while ((nl = partial.indexOf('\n')) >= 0) {
          const line = partial.slice(0, nl);
          partial = partial.slice(nl + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line) as { type: string; object: PodView };
          if (ev.type === 'DELETED') pods.delete(ev.object.metadata.name);
          else pods.set(ev.object.metadata.name, ev.object);
          if (++events >= REPLICAS) synced();
          if (events > REPLICAS) fewest = Math.min(fewest, readyNow());
          timeline.push(`${ev.type} ${ev.object.metadata.name} ${ev.object.spec.containers[0].image} del=${!!ev.object.metadata.deletionTimestamp} ready=${(ev.object.status?.conditions ?? []).find((c) => c.type === 'Ready')?.status} -> ${readyNow()}`);
        }
      }
    } catch {
      // the watch ends with the test
    }
  })();
  await initial;
  t.is(readyNow(), REPLICAS);

  const set = await kubectl(node.api.kubeconfig, ['set', 'image', 'deployment/web', `c=${V2}`]);
  t.is(set.code, 0, set.stderr);
  const second = await kubectl(node.api.kubeconfig, ['rollout', 'status', 'deployment/web', '--timeout=150s'], { timeoutMs: 160_000 });
  t.is(second.code, 0, `${second.stderr}\n${node.agent.output().slice(-3000)}`);
  t.regex(second.stdout, /successfully rolled out/);
  const live = [...pods.values()].filter((p) => !p.metadata.deletionTimestamp);
  t.true(live.filter((p) => p.spec.containers[0].image === V2).length === REPLICAS, 'every live pod runs the new tag');
  t.true(events > 2 * REPLICAS, `the watch saw the rollout (${events} events)`);
  t.true(fewest >= REPLICAS - MAX_UNAVAILABLE, `never fewer than replicas - maxUnavailable Ready pods: fewest ${fewest}\n${timeline.join('\n')}`);
});
