/**
 * Events end to end with real processes: svc-apiserver (scheduler, node lifecycle) and svc-node on
 * the CRI simulator, read by stock clients. `kubectl describe pod` shows the scheduler's and the
 * agent's events; a pull from an unreachable registry (the simulator fails hosts under .invalid as
 * containerd does) shows Failed and BackOff counted on one event each; `kubectl get events` and
 * `kubectl get events.v1.events.k8s.io` list the same events; the Python client's CoreV1Api and
 * EventsV1Api read them; `kubectl describe node` shows the agent's node events.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectlOk, python } from '../../helpers/real-clients';
import { eventually, kubectlStdin, startAgent, type AgentProcess } from '../agent/agent-process';

const NODE = 'e2e-events';

let api: RunningApiServer | undefined;
let agent: AgentProcess | undefined;
let dir: string | undefined;

test.before(async () => {
  api = await startApiServer();
  dir = mkdtempSync(path.join(tmpdir(), 'svc-events-e2e-'));
  agent = startAgent({ dir, nodeName: NODE, kubeconfig: api.kubeconfig, configLines: ['enableServer: false'] });
  await agent.waitForLog('node registered and heartbeating', 90_000);
});

test.after.always(async () => {
  await agent?.stop('SIGKILL');
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function createPod(name: string, image: string): Promise<void> {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image, imagePullPolicy: 'Always', command: ['sleep', '3600'] }] } };
  await kubectlStdin(api!.kubeconfig, ['create', '-f', '-'], JSON.stringify(pod));
}

/** kubectl's output, failing the step when kubectl fails. */
function k(...args: string[]): Promise<string> {
  return kubectlOk(api!.kubeconfig, args);
}

/** The Events section of kubectl describe, once every pattern matches it (bounded). */
function describedEvents(kind: string, name: string, patterns: RegExp[], boundMs = 60_000): Promise<string> {
  return eventually(
    `${kind}/${name} events ${patterns.map(String).join(', ')}`,
    async () => {
      const out = await k('describe', kind, name);
      const events = out.slice(out.indexOf('Events:'));
      return patterns.every((p) => p.test(events)) ? events : undefined;
    },
    boundMs,
    1000,
  );
}

test.serial('kubectl describe pod shows Scheduled, Pulling, Pulled, Created and Started, from the scheduler and the agent', async (t) => {
  await createPod('web', 'svc.local/busybox:latest');
  const events = await describedEvents('pod', 'web', [/\bStarted\b/]);
  t.regex(events, /Normal\s+Scheduled\s+.*default-scheduler\s+Successfully assigned default\/web to e2e-events/);
  t.regex(events, /Normal\s+Pulling\s+.*kubelet\s+Pulling image "svc\.local\/busybox:latest"/);
  t.regex(events, /Normal\s+Pulled\s+.*kubelet\s+Successfully pulled image "svc\.local\/busybox:latest" in \S+ \(\S+ including waiting\)\. Image size: \d+ bytes\./);
  t.regex(events, /Normal\s+Created\s+.*kubelet\s+Created container: app/);
  t.regex(events, /Normal\s+Started\s+.*kubelet\s+Started container app/);
});

test.serial('a pull from an unreachable registry: Failed and BackOff, repeats counted on one event', async (t) => {
  await createPod('ghost', 'registry.invalid/ghost:1');
  const events = await describedEvents('pod', 'ghost', [/Failed\s+\S+ \(x\d+ over \S+\)\s+kubelet\s+Error: ImagePullBackOff/, /BackOff\s+.*Back-off pulling image "registry\.invalid\/ghost:1"/], 120_000);
  t.regex(events, /Warning\s+Failed\s+.*kubelet\s+Failed to pull image "registry\.invalid\/ghost:1": .*no such host/);
  t.regex(events, /Warning\s+Failed\s+.*kubelet\s+Error: ErrImagePull/);
  const list = JSON.parse(await k('get', 'events', '--field-selector', 'involvedObject.name=ghost,reason=Failed', '-o', 'json')) as { items: Array<{ message: string; count: number; source: { component: string; host: string }; reportingComponent: string; reportingInstance: string }> };
  const backOff = list.items.find((e) => e.message === 'Error: ImagePullBackOff');
  t.true((backOff?.count ?? 0) >= 2, 'one event whose count grows, not one event per repeat');
  t.deepEqual(backOff?.source, { component: 'kubelet', host: NODE });
  t.is(backOff?.reportingComponent, 'kubelet');
  t.is(backOff?.reportingInstance, NODE);
});

test.serial('kubectl get events and get events.v1.events.k8s.io list the same events', async (t) => {
  const core = await k('get', 'events');
  const v1 = await k('get', 'events.v1.events.k8s.io');
  for (const table of [core, v1]) {
    t.regex(table, /Normal\s+Scheduled\s+pod\/web\s+Successfully assigned default\/web to e2e-events/);
    t.regex(table, /Normal\s+Started\s+pod\/web\s+Started container app/);
  }
  const coreNames = (JSON.parse(await k('get', 'events', '-o', 'json')) as { items: Array<{ metadata: { name: string } }> }).items.map((e) => e.metadata.name).sort();
  const v1List = JSON.parse(await k('get', 'events.v1.events.k8s.io', '-o', 'json')) as { items: Array<{ apiVersion: string; metadata: { name: string }; regarding: { name: string }; note: string; reportingController: string }> };
  t.deepEqual(v1List.items.map((e) => e.metadata.name).sort(), coreNames);
  const started = v1List.items.find((e) => e.note === 'Started container app');
  t.is(started?.apiVersion, 'events.k8s.io/v1');
  t.is(started?.regarding.name, 'web');
  t.is(started?.reportingController, 'kubelet');
});

test.serial("the Python client's CoreV1Api and EventsV1Api list the events", async (t) => {
  const r = await python<{ core: string[]; v1: string[]; v1Note: string; v1Time: boolean }>(
    api!.kubeconfig,
    [
      'core = client.CoreV1Api().list_namespaced_event("default").items',
      'v1 = client.EventsV1Api().list_namespaced_event("default").items',
      'started = [e for e in v1 if e.reason == "Started" and e.regarding.name == "web"][0]',
      'print(json.dumps({"core": sorted(set(e.reason for e in core if e.involved_object.name == "web")), "v1": sorted(set(e.reason for e in v1 if e.regarding.name == "web")), "v1Note": started.note, "v1Time": started.event_time is not None}))',
    ].join('\n'),
  );
  for (const reasons of [r.core, r.v1]) for (const want of ['Created', 'Pulled', 'Pulling', 'Scheduled', 'Started']) t.true(reasons.includes(want), `${want} in ${reasons.join(',')}`);
  t.is(r.v1Note, 'Started container app');
  t.true(r.v1Time);
});

test.serial('kubectl describe node shows the agent\'s node events and the node controller\'s', async (t) => {
  const events = await describedEvents('node', NODE, [/RegisteredNode/, /NodeReady/]);
  t.regex(events, /Normal\s+Starting\s+.*kubelet\s+Starting kubelet\./);
  t.regex(events, /Normal\s+NodeHasSufficientMemory\s+.*Node e2e-events status is now: NodeHasSufficientMemory/);
  t.regex(events, /Normal\s+NodeHasNoDiskPressure\s+/);
  t.regex(events, /Normal\s+NodeHasSufficientPID\s+/);
  t.regex(events, /Normal\s+RegisteredNode\s+.*node-controller\s+Node e2e-events event: Registered Node e2e-events in Controller/);
});
