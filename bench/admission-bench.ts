import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCA, issue } from '../apiserver/pki/certs';
import { repoRoot, startApiServer } from '../test/helpers/apiserver-process';
import type { Cleanup } from './lib/cleanup';
import { configMap } from './lib/http-figures';
import { runClosedLoop, sleep, summarize, type LoadRun } from './lib/load';
import { procCpuPrecise } from './lib/proc-cpu';
import { progress } from './lib/progress';
import { median, ratio, round } from './lib/stats';
import { adminTls, Target } from './lib/target';

/**
 * `npm run bench -- admission [--quick]` (issue 23, Performance): ConfigMap creates through one
 * svc-apiserver in three namespaces, in the same run and interleaved parts: one no policy or hook
 * selects, one selected by 10 ValidatingAdmissionPolicies (each binding's namespaceSelector), and
 * one sent to a validating webhook (a local HTTPS process, test/helpers/admission-webhook-server.ts,
 * caBundle-verified TLS). Goal: the 10 policies cost at most 20% of the no-policy throughput;
 * on a shared, busy machine the throughput of one part swings more than that, so the server's CPU
 * per create (its own threads, per part, median) is reported beside it as the steadier figure.
 * A fourth namespace is audited at Metadata by the server's audit policy (the others at None):
 * goal, the audit log costs at most 10% of the throughput.
 */

interface Plan {
  clients: number;
  warmup: number;
  perPart: number;
  parts: number;
}

const FULL: Plan = { clients: 16, warmup: 300, perPart: 1500, parts: 3 };
const QUICK: Plan = { clients: 8, warmup: 50, perPart: 200, parts: 1 };
const GOAL_MIN_RATIO = 0.8;
const AR = 'admissionregistration.k8s.io/v1';
/** The audit log's goal: auditing at Metadata costs at most 10% of the throughput. */
const GOAL_AUDIT_MIN_RATIO = 0.9;
const MODES = ['none', 'policies_10', 'webhook', 'audit_metadata'] as const;
type Mode = (typeof MODES)[number];
const NAMESPACE: Record<Mode, string> = { none: 'bench-none', policies_10: 'bench-vap', webhook: 'bench-hook', audit_metadata: 'bench-audit' };

/**
 * One server for every mode, so the audit policy audits only the audit_metadata namespace at
 * Metadata (to a log file, the --audit-log-path backend) and every other request at None: the
 * other modes still pay the policy's evaluation, as a server with a policy of None rules does.
 */
function auditPolicy(): object {
  return { apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'Metadata', namespaces: [NAMESPACE.audit_metadata] }, { level: 'None' }] };
}

/** Ten policies of the kinds clusters run: label, size, name and key checks over ConfigMaps. */
function policies(): object[] {
  const checks = [
    "has(object.metadata.labels) && 'app' in object.metadata.labels",
    '!has(object.data) || size(object.data) <= 50',
    "!object.metadata.name.startsWith('forbidden-')",
    "!has(object.metadata.labels) || !('bench-deny' in object.metadata.labels)",
    '!has(object.data) || object.data.all(k, size(k) < 64)',
    "object.metadata.name.matches('^[a-z0-9-]+$')",
    "!has(object.metadata.annotations) || !('forbidden' in object.metadata.annotations)",
    '!has(object.binaryData)',
    '!has(object.data) || object.data.all(k, size(object.data[k]) < 100000)',
    "request.userInfo.username != 'system:anonymous'",
  ];
  return checks.flatMap((expression, i) => [
    {
      apiVersion: AR,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: `bench-${i}` },
      spec: { matchConstraints: { resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] }, validations: [{ expression, message: `check ${i}` }] },
    },
    { apiVersion: AR, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: `bench-${i}` }, spec: { policyName: `bench-${i}`, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { bench: 'vap' } } } } },
  ]);
}

async function startHookServer(dir: string, cleanup: Cleanup): Promise<{ port: number; caBundle: string; calls: () => number }> {
  const ca = await createCA('bench webhook CA');
  const cert = await issue(ca, { commonName: 'hooks', ips: ['127.0.0.1'], usage: 'server', validityMs: 3_600_000 });
  writeFileSync(join(dir, 'tls.crt'), cert.certPem);
  writeFileSync(join(dir, 'tls.key'), cert.keyPem);
  const proc = spawn(process.execPath, [join(repoRoot, 'dist', 'test', 'helpers', 'admission-webhook-server.js'), join(dir, 'tls.crt'), join(dir, 'tls.key')], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanup.child(proc);
  let calls = 0;
  let buffered = '';
  const port = await new Promise<number>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`webhook server exited ${code}`)));
    proc.stdout.on('data', (c: Buffer) => {
      buffered += c.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith('port=')) resolve(Number(line.slice(5)));
        else if (line.startsWith('{')) calls++;
      }
    });
  });
  return { port, caBundle: Buffer.from(ca.certPem).toString('base64'), calls: () => calls };
}

/** ConfigMap creates the audit log holds at ResponseComplete (a check that the audited mode was audited). */
function auditedCreates(path: string): number {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return 0;
  }
  return text.split('\n').filter((l) => l.includes('"stage":"ResponseComplete"') && l.includes('"verb":"create"') && l.includes(`"namespace":"${NAMESPACE.audit_metadata}"`)).length;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

export async function runAdmissionBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const plan = args.includes('--quick') ? QUICK : FULL;
  const notes: string[] = plan === QUICK ? ['--quick: reduced counts, figures are not to be quoted'] : [];
  const loadBefore = loadavg()[0];
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-admission-'));
  cleanup.dir(dir);
  const hooks = await startHookServer(dir, cleanup);
  writeFileSync(join(dir, 'audit-policy.yaml'), JSON.stringify(auditPolicy()));
  progress('starting svc-apiserver');
  const s = await startApiServer({ args: [`--audit-policy-file=${join(dir, 'audit-policy.yaml')}`, `--audit-log-path=${join(dir, 'audit.log')}`] });
  cleanup.add('stop svc-apiserver', async () => void (await s.stop()));
  const target = new Target('svc-apiserver', '127.0.0.1', s.port, adminTls(s.dataDir));
  const pool = target.pool(plan.clients);
  cleanup.add('close the client pool', () => pool.close());
  const labels: Record<Mode, string> = { none: 'none', policies_10: 'vap', webhook: 'hook', audit_metadata: 'audit' };
  for (const m of MODES) await target.expect(pool, [201], 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE[m], labels: { bench: labels[m] } } });
  for (const o of policies()) {
    const plural = (o as { kind: string }).kind === 'ValidatingAdmissionPolicy' ? 'validatingadmissionpolicies' : 'validatingadmissionpolicybindings';
    await target.expect(pool, [201], 'POST', `/apis/admissionregistration.k8s.io/v1/${plural}`, o);
  }
  await target.expect(pool, [201], 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: AR,
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'bench' },
    webhooks: [{ name: 'allow.bench.example.com', clientConfig: { url: `https://127.0.0.1:${hooks.port}/allow`, caBundle: hooks.caBundle }, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], namespaceSelector: { matchLabels: { bench: 'hook' } }, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
  });
  progress('waiting for the policies and the hook to take effect');
  let probe = 0;
  await until('the policies', async () => (await target.send(pool, 'POST', `/api/v1/namespaces/${NAMESPACE.policies_10}/configmaps?dryRun=All`, { ...configMap(`probe-${probe++}`), metadata: { name: 'forbidden-x', labels: { app: 'x' } } })).status === 422);
  await until('the webhook', async () => {
    const before = hooks.calls();
    await target.expect(pool, [201], 'POST', `/api/v1/namespaces/${NAMESPACE.webhook}/configmaps?dryRun=All`, configMap(`probe-${probe++}`));
    return hooks.calls() > before;
  });

  let seq = 0;
  const runMode = (m: Mode, count: number) =>
    runClosedLoop(plan.clients, count, async () => {
      await target.expect(pool, [201], 'POST', `/api/v1/namespaces/${NAMESPACE[m]}/configmaps`, configMap(`cm-${seq++}`));
    });
  for (const m of MODES) {
    progress(`warm-up: ${m}`);
    await runMode(m, plan.warmup);
  }
  const runs: Record<Mode, LoadRun[]> = { none: [], policies_10: [], webhook: [], audit_metadata: [] };
  const cpuPerCreate: Record<Mode, number[]> = { none: [], policies_10: [], webhook: [], audit_metadata: [] };
  const pid = s.proc.pid!;
  for (let part = 0; part < plan.parts; part++) {
    // Alternate the order each part so drift (compaction, GC, a busy neighbour) spreads over the modes.
    const order = part % 2 === 0 ? MODES : [...MODES].reverse();
    for (const m of order) {
      progress(`part ${part + 1}/${plan.parts}: ${plan.perPart} creates, ${m}`);
      const cpu0 = procCpuPrecise(pid);
      runs[m].push(await runMode(m, plan.perPart));
      cpuPerCreate[m].push(round(((procCpuPrecise(pid) - cpu0) * 1000) / plan.perPart, 4));
    }
  }
  const figure = (m: Mode) => ({ ...summarize(runs[m]), server_cpu_ms_per_create: median(cpuPerCreate[m]), server_cpu_ms_per_create_parts: cpuPerCreate[m] });
  const figures = { none: figure('none'), policies_10: figure('policies_10'), webhook: figure('webhook'), audit_metadata: figure('audit_metadata') };
  const audited = auditedCreates(join(dir, 'audit.log'));
  const ra = ratio(figures.audit_metadata.per_second, figures.none.per_second);
  const cpuAudit = ratio(figures.audit_metadata.server_cpu_ms_per_create, figures.none.server_cpu_ms_per_create);
  const r = ratio(figures.policies_10.per_second, figures.none.per_second);
  // Each part's ratio against the no-policy run of the same part (adjacent in time), then their
  // median: a part slowed down by a busy neighbour weighs less than in the pooled ratio.
  const pairedMedian = (m: Mode) => median(runs[m].map((run, i) => (run.count / run.seconds) / (runs.none[i].count / runs.none[i].seconds)));
  const rounded = (v: number) => (Number.isFinite(v) ? round(v, 3) : null);
  const cpu = ratio(figures.policies_10.server_cpu_ms_per_create, figures.none.server_cpu_ms_per_create);
  if (loadBefore > 1.5) notes.push(`machine busy before the run (load ${loadBefore.toFixed(2)}): figures are noisier than usual`);
  return {
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model, node: process.version, load_average_1m: { before: round(loadBefore), after: round(loadavg()[0]) } },
    setup: {
      request: 'POST a ~200-byte ConfigMap (admin client certificate, keep-alive TLS)',
      modes: {
        none: `${NAMESPACE.none}: no policy binding or hook selects it (the plugins still run and match nothing)`,
        policies_10: `${NAMESPACE.policies_10}: 10 ValidatingAdmissionPolicies, each with one validation, bound with Deny by namespaceSelector`,
        webhook: `${NAMESPACE.webhook}: one validating webhook (allow) in a separate local Node.js HTTPS process, TLS verified with caBundle`,
        audit_metadata: `${NAMESPACE.audit_metadata}: audited at Metadata by the server's audit policy (log backend, a file); every other request is audited at None`,
      },
      audit_log_creates: audited,
      load: `${plan.clients} closed-loop clients; ${plan.warmup} warm-up creates per mode; ${plan.parts} interleaved parts of ${plan.perPart} creates per mode`,
      webhook_calls: hooks.calls(),
    },
    creates: figures,
    ratios: {
      policies_10_vs_none: r,
      webhook_vs_none: ratio(figures.webhook.per_second, figures.none.per_second),
      server_cpu_per_create_policies_10_vs_none: cpu,
      server_cpu_per_create_webhook_vs_none: ratio(figures.webhook.server_cpu_ms_per_create, figures.none.server_cpu_ms_per_create),
      audit_metadata_vs_none: ra,
      server_cpu_per_create_audit_metadata_vs_none: cpuAudit,
      policies_10_vs_none_paired_parts_median: rounded(pairedMedian('policies_10')),
      audit_metadata_vs_none_paired_parts_median: rounded(pairedMedian('audit_metadata')),
    },
    goals: {
      policies_10_vs_none: { target: `>= ${GOAL_MIN_RATIO}`, value: r, met: r !== null && r >= GOAL_MIN_RATIO },
      // The same goal from the server's side: CPU per create at most 1/0.8 of the no-policy one.
      server_cpu_per_create_policies_10_vs_none: { target: `<= ${round(1 / GOAL_MIN_RATIO, 3)}`, value: cpu, met: cpu !== null && cpu <= 1 / GOAL_MIN_RATIO },
      audit_metadata_vs_none: { target: `>= ${GOAL_AUDIT_MIN_RATIO}`, value: ra, met: ra !== null && ra >= GOAL_AUDIT_MIN_RATIO },
      server_cpu_per_create_audit_metadata_vs_none: { target: `<= ${round(1 / GOAL_AUDIT_MIN_RATIO, 3)}`, value: cpuAudit, met: cpuAudit !== null && cpuAudit <= 1 / GOAL_AUDIT_MIN_RATIO },
    },
    notes,
  };
}
