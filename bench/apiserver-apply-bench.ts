import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { request, type Agent } from 'undici';
import { startApiServer } from '../test/helpers/apiserver-process';
import type { Cleanup } from './lib/cleanup';
import { ensureNamespace } from './lib/http-figures';
import { runClosedLoop, summarize, type LoadRun } from './lib/load';
import { procCpuSeconds } from './lib/proc-cpu';
import { procName } from './lib/proc-stats';
import { progress } from './lib/progress';
import { median, round } from './lib/stats';
import { stopApi } from './lib/stop-api';
import { adminTls, Target } from './lib/target';

/** The sizes of one run; --quick shrinks them to check the bench itself, not to quote. */
interface Plan {
  clients: number;
  warmup: number;
  perPart: number;
  parts: number;
}

const FULL: Plan = { clients: 8, warmup: 200, perPart: 400, parts: 4 };
const QUICK: Plan = { clients: 4, warmup: 20, perPart: 50, parts: 2 };

/** Issue 18's goal: an apply costs the server at most 1.5 times the merge patch of the same change. */
const GOAL = { target: '<= 1.5', ok: (x: number) => x <= 1.5 };
const NS = 'bench-apply';

/** One kind of object and one change to it, written by apply and by merge patch (each to objects of its own). */
interface Case {
  resource: string;
  /** The whole object as applied (and as created for the merge-patch objects), with `v` in the changed field. */
  object(name: string, v: string): Record<string, unknown>;
  /** The patch making the same change, and its content type. */
  patch: { contentType: string; body(v: string): Record<string, unknown> };
}

/** A ConfigMap of 20 fields; the change is one field's value. */
const CONFIG_MAP: Case = {
  resource: 'configmaps',
  object: (name, v) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { app: 'bench', tier: 'config' } },
    data: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`field-${String(i).padStart(2, '0')}`, i === 7 ? v : `value of field ${i}`])),
  }),
  patch: { contentType: 'application/merge-patch+json', body: (v) => ({ data: { 'field-07': v } }) },
};

const container = (i: number, tag: string) => ({
  name: `c${i}`,
  image: `registry.example/app-${i}:${tag}`,
  ports: [{ name: 'http', containerPort: 8080 + i }],
  env: [
    { name: 'MODE', value: 'bench' },
    { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
  ],
  resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
});

/** A Pod of 3 containers (kept off every scheduler); the change is one container's image (a pod may change only that). */
const POD: Case = {
  resource: 'pods',
  object: (name, v) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench' } },
    spec: { schedulerName: 'bench-none', containers: [container(0, '1'), container(1, v), container(2, '1')] },
  }),
  // A JSON merge patch cannot name a list element, and one replacing the containers list drops
  // their defaults (an update of other fields than images, refused for pods): the strategic merge
  // patch of that one container is the same change as kubectl set image writes it.
  patch: { contentType: 'application/strategic-merge-patch+json', body: (v) => ({ spec: { containers: [{ name: 'c1', image: `registry.example/app-1:${v}` }] } }) },
};

interface ModeRun {
  load: LoadRun[];
  cpuParts: number[];
  cpu: number;
}

async function send(target: Target, pool: Agent, path: string, contentType: string, body: string): Promise<void> {
  const res = await request(target.origin + path, { method: 'PATCH', dispatcher: pool, headers: { accept: 'application/json', 'content-type': contentType }, body });
  const text = await res.body.text();
  if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`PATCH ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
}

/** Apply against merge patch for one case: parts interleaved A-B-B-A, server CPU per request of each part. */
async function compareCase(target: Target, pid: number, c: Case, plan: Plan): Promise<object> {
  const base = `/api/v1/namespaces/${NS}/${c.resource}`;
  const pool = target.pool(plan.clients);
  let seq = 0;
  const modes = {
    // Each client writes objects of its own (i modulo clients), so no write waits on another's conflict.
    apply: (i: number) => send(target, pool, `${base}/apply-${i % plan.clients}?fieldManager=bench`, 'application/apply-patch+yaml', JSON.stringify(c.object(`apply-${i % plan.clients}`, `v${seq++}`))),
    merge: (i: number) => send(target, pool, `${base}/merge-${i % plan.clients}?fieldManager=bench`, c.patch.contentType, JSON.stringify(c.patch.body(`v${seq++}`))),
  };
  try {
    for (let k = 0; k < plan.clients; k++) {
      await send(target, pool, `${base}/apply-${k}?fieldManager=bench`, 'application/apply-patch+yaml', JSON.stringify(c.object(`apply-${k}`, 'v0')));
      await target.expect(pool, [201], 'POST', `${base}?fieldManager=bench`, c.object(`merge-${k}`, 'v0'));
    }
    for (const op of Object.values(modes)) await runClosedLoop(plan.clients, plan.warmup, op);
    const runs: Record<string, ModeRun> = { apply: { load: [], cpuParts: [], cpu: 0 }, merge: { load: [], cpuParts: [], cpu: 0 } };
    for (let part = 0; part < plan.parts; part++) {
      for (const name of part % 2 === 0 ? ['apply', 'merge'] : ['merge', 'apply']) {
        const s0 = procCpuSeconds(pid);
        const t0 = performance.now();
        const r = await runClosedLoop(plan.clients, plan.perPart, modes[name as keyof typeof modes]);
        const cpu = procCpuSeconds(pid) - s0;
        runs[name].load.push(r);
        runs[name].cpu += cpu;
        runs[name].cpuParts.push(round((cpu * 1000) / r.count, 4));
        progress(`${c.resource} ${name}: part ${part + 1}/${plan.parts}: ${Math.round(r.count / ((performance.now() - t0) / 1000))}/s, ${round((cpu * 1000) / r.count, 3)} ms server CPU per request`);
      }
    }
    const figures = (m: ModeRun) => ({ ...summarize(m.load), server_cpu_ms_per_request: round((m.cpu * 1000) / summarize(m.load).count, 4), server_cpu_ms_per_request_parts: m.cpuParts });
    // The median of the per-part ratios: both modes of a part ran seconds apart, so another tenant's burst skews one ratio, not the figure.
    const paired = median(runs.apply.cpuParts.map((a, i) => a / runs.merge.cpuParts[i]));
    return { apply: figures(runs.apply), patch: { content_type: c.patch.contentType, ...figures(runs.merge) }, server_cpu_vs_patch: round(paired, 3) };
  } finally {
    await pool.close();
  }
}

/**
 * `npm run bench -- apiserver --apply [--quick]` (issue 18): server-side apply of a 20-field
 * ConfigMap and of a 3-container Pod against a patch of the same change (JSON merge patch for the
 * ConfigMap, strategic merge patch of the one container for the Pod), on the same svc-apiserver
 * in the same run; server CPU per request. Every write changes the object (a new value each
 * time), so both modes pay the store write; apply sends the whole configuration, as appliers do
 * (JSON, as kubectl and client-go send it), the patch only the change.
 */
export async function runApiServerApplyBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const plan = args.includes('--quick') ? QUICK : FULL;
  const notes: string[] = [];
  if (plan === QUICK) notes.push('--quick: reduced counts, figures are not comparable with a full run');
  const loadBefore = loadavg()[0];
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-apiserver-apply-'));
  cleanup.dir(dataDir);
  progress('starting svc-apiserver');
  const api = await startApiServer({ dataDir });
  cleanup.child(api.proc);
  cleanup.add('stop svc-apiserver', () => stopApi(api));
  const pid = api.proc.pid!;
  if (procName(pid) !== 'node') notes.push(`pid ${pid} is ${procName(pid)}, not node: server CPU figures may be the launcher's`);
  const target = new Target('api', '127.0.0.1', api.port, adminTls(dataDir));
  await ensureNamespace(target, NS);
  const configMap = (await compareCase(target, pid, CONFIG_MAP, plan)) as { server_cpu_vs_patch: number };
  const pod = (await compareCase(target, pid, POD, plan)) as { server_cpu_vs_patch: number };
  await stopApi(api);
  if (loadBefore > 1.5) notes.push(`the machine was busy (1-minute load ${loadBefore.toFixed(2)} on ${cpus().length} cores before the run): figures are noisier than usual`);
  const goal = (value: number) => ({ target: GOAL.target, value, met: GOAL.ok(value) });
  return {
    benchmark: 'apiserver --apply',
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, load_average_1m: { before: round(loadBefore), after: round(loadavg()[0]) } },
    plan,
    config_map_20_fields: configMap,
    pod_3_containers: pod,
    goals: { config_map_apply_cpu_vs_merge_patch: goal(configMap.server_cpu_vs_patch), pod_apply_cpu_vs_strategic_merge_patch: goal(pod.server_cpu_vs_patch) },
    notes,
  };
}
