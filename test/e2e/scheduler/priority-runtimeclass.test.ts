/**
 * PriorityClass, preemption and RuntimeClass end to end (issue 20, items 3 and 4): a real
 * svc-apiserver, kubectl, and a real svc-node (as system:node:<name>) on the CRI simulator (which knows the runtime
 * handlers "" and runc only, as containerd's stock config). A high-priority pod that fits nowhere
 * preempts a low-priority one on the full node, is nominated there and runs once the victim is
 * gone; the system classes exist from the start; admission refuses unknown classes with
 * upstream's messages; a RuntimeClass's overhead reaches the pod and its handler the CRI (a
 * handler the runtime lacks fails the sandbox with containerd's message).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { request } from 'undici';
import { kubeconfig } from '../../../apiserver/pki/bootstrap';
import { issue } from '../../../apiserver/pki/certs';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl, kubectlOk } from '../../helpers/real-clients';
import { eventually, startAgent, type AgentProcess } from '../agent/agent-process';

const NODE = 'e2e-priority';
const IMAGE = 'svc.local/busybox:latest';

let api: RunningApiServer | undefined;
let agent: AgentProcess | undefined;
let dir: string | undefined;

test.before(async () => {
  api = await startApiServer();
  dir = mkdtempSync(path.join(tmpdir(), 'svc-priority-e2e-'));
  // The node's own identity: the Node authorizer and system:node's rules decide what it may read (RuntimeClasses).
  const ca = { certPem: readFileSync(path.join(api.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(path.join(api.dataDir, 'pki', 'ca.key'), 'utf8') };
  const id = await issue(ca, { commonName: `system:node:${NODE}`, organizations: ['system:nodes'], usage: 'client', validityMs: 3600_000 });
  const kc = path.join(dir, 'node.kubeconfig');
  writeFileSync(kc, kubeconfig({ server: api.url, caPem: api.caPem, user: `system:node:${NODE}`, ...id }), { mode: 0o600 });
  agent = startAgent({ dir, nodeName: NODE, kubeconfig: kc, configLines: ['enableServer: false'] });
  await agent.waitForLog('node registered and heartbeating', 90_000);
});

test.after.always(async () => {
  await agent?.stop('SIGKILL');
  await api?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function get(p: string): Promise<{ status: number; json: any }> {
  const res = await request(`${api!.url}${p}`, { dispatcher: api!.admin, headers: { accept: 'application/json' } });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

const run = (args: string[], input?: string) => kubectl(api!.kubeconfig, args, { timeoutMs: 30_000, ...(input !== undefined ? { input } : {}) });
function k(...args: string[]): Promise<string> {
  return kubectlOk(api!.kubeconfig, args);
}

function pod(name: string, spec: Record<string, unknown>, cpuMilli?: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image: IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], ...(cpuMilli ? { resources: { requests: { cpu: `${cpuMilli}m` } } } : {}) }],
      ...spec,
    },
  });
}

const podJson = async (name: string) => (await get(`/api/v1/namespaces/default/pods/${name}`)).json;
const running = async (name: string) => {
  const p = await podJson(name);
  return p?.status?.phase === 'Running' && p.spec?.nodeName ? p : undefined;
};

/** The node's allocatable cpu in millicores. */
async function allocatableMilli(): Promise<number> {
  const cpu = String((await get(`/api/v1/nodes/${NODE}`)).json.status.allocatable.cpu);
  return cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000;
}

test.serial('system classes exist; kubectl create priorityclass; admission refuses bad classes', async (t) => {
  t.regex(await k('get', 'priorityclasses'), /system-node-critical\s+2000001000\s+false/);
  await k('create', 'priorityclass', 'high', '--value=1000', '--description=may preempt');
  await k('create', 'priorityclass', 'low', '--value=10', '--global-default=true');
  const high = await k('get', 'priorityclass', 'high', '-o', 'json');
  t.like(JSON.parse(high), { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', value: 1000, preemptionPolicy: 'PreemptLowerPriority' });
  const second = await run(['create', 'priorityclass', 'other', '--value=5', '--global-default=true']);
  t.not(second.code, 0);
  t.regex(second.stderr, /PriorityClass low is already marked as default\. Only one default can exist/);
  const reserved = await run(['create', 'priorityclass', 'system-mine', '--value=5']);
  t.regex(reserved.stderr, /priority class names with 'system-' prefix are reserved for system use only/);
  const tooHigh = await run(['create', 'priorityclass', 'huge', '--value=1000000001']);
  t.regex(tooHigh.stderr, /maximum allowed value of a user defined priority is 1000000000/);
  const unknown = await run(['create', '-f', '-'], pod('orphan', { priorityClassName: 'nope' }));
  t.regex(unknown.stderr, /pods "orphan" is forbidden: no PriorityClass with name nope was found/);
});

test.serial('a high-priority pod preempts a low-priority one on the full node', async (t) => {
  const share = Math.floor((await allocatableMilli()) * 0.6);
  // No class named: the global default "low" (10) applies.
  const created = await run(['create', '-f', '-'], pod('victim', {}, share));
  t.is(created.code, 0, created.stderr);
  const victim = await eventually('victim running', () => running('victim'), 60_000);
  t.like(victim.spec, { priorityClassName: 'low', priority: 10, preemptionPolicy: 'PreemptLowerPriority' });
  const made = await run(['create', '-f', '-'], pod('preemptor', { priorityClassName: 'high' }, share));
  t.is(made.code, 0, made.stderr);
  const nominated = await eventually('preemptor nominated', async () => ((await podJson('preemptor'))?.status?.nominatedNodeName === NODE ? true : undefined), 60_000);
  t.true(nominated);
  const bound = await eventually('preemptor running', () => running('preemptor'), 90_000);
  t.is(bound.spec.nodeName, NODE);
  t.is(bound.spec.priority, 1000);
  t.is((await get('/api/v1/namespaces/default/pods/victim')).status, 404);
  const events = await k('get', 'events', '--field-selector', 'reason=Preempted', '-o', 'json');
  const preempted = JSON.parse(events).items as Array<{ message: string; involvedObject: { name: string } }>;
  t.true(preempted.some((e) => e.involvedObject.name === 'victim' && e.message === `Preempted by pod ${bound.metadata.uid} on node ${NODE}`), events);
});

test.serial('RuntimeClass: overhead and handler reach the pod and the runtime; unknown classes and handlers fail clearly', async (t) => {
  const rc = (name: string, handler: string, extra: Record<string, unknown> = {}) => JSON.stringify({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name }, handler, ...extra });
  t.is((await run(['create', '-f', '-'], rc('standard', 'runc', { overhead: { podFixed: { cpu: '10m', memory: '8Mi' } } }))).code, 0);
  t.is((await run(['create', '-f', '-'], rc('kata', 'kata'))).code, 0);
  t.regex(await k('get', 'runtimeclasses'), /standard\s+runc\s/);
  await run(['create', '-f', '-'], pod('with-runc', { runtimeClassName: 'standard' }));
  const p = await eventually('with-runc running', () => running('with-runc'), 60_000);
  t.deepEqual(p.spec.overhead, { cpu: '10m', memory: '8Mi' });
  const missing = await run(['create', '-f', '-'], pod('no-class', { runtimeClassName: 'gvisor' }));
  t.regex(missing.stderr, /pods "no-class" is forbidden: pod rejected: RuntimeClass "gvisor" not found/);
  const mismatch = await run(['create', '-f', '-'], pod('own-overhead', { runtimeClassName: 'standard', overhead: { cpu: '1' } }));
  t.regex(mismatch.stderr, /Pod's Overhead doesn't match RuntimeClass's defined Overhead/);
  await run(['create', '-f', '-'], pod('with-kata', { runtimeClassName: 'kata' }));
  const failed = await eventually(
    'sandbox refused',
    async () => {
      const items = JSON.parse(await k('get', 'events', '--field-selector', 'involvedObject.name=with-kata,reason=FailedCreatePodSandBox', '-o', 'json')).items as Array<{ message: string }>;
      return items[0];
    },
    60_000,
  );
  t.regex(failed.message, /no runtime for "kata" is configured/);
  t.is((await podJson('with-kata')).status.phase, 'Pending');
});
