import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../test/helpers/apiserver-process';
import type { Cleanup } from './lib/cleanup';
import { procMemMb, procName } from './lib/proc-stats';
import { progress } from './lib/progress';
import { round } from './lib/stats';

/**
 * `npm run bench -- hostile-bodies` (issue 16): what one hostile request body costs svc-apiserver,
 * against a benign body of the same kind as the baseline in the same run. Each case gets a fresh
 * server (so that its peak memory is its own) and is sent once while a probe client asks GET
 * /livez back to back on its own connection: the longest probe answer is the longest time the
 * server stopped answering other clients (its event loop was blocked).
 */
interface Case {
  name: string;
  describe: string;
  method: 'POST' | 'PATCH';
  path: string;
  contentType: string;
  body: () => string;
}

const ns = 'default';
const cm = `/api/v1/namespaces/${ns}/configmaps`;

/** The probe's body: an add, then n copies of the new subtree into itself, each doubling it. */
function doublingPatch(n: number): string {
  const ops: unknown[] = [{ op: 'add', path: '/metadata/labels', value: { x: 'y'.repeat(500) } }];
  for (let i = 0; i < n; i++) ops.push({ op: 'copy', from: '/metadata/labels', path: `/metadata/labels/c${i}` });
  return JSON.stringify(ops);
}

function aliasBomb(aliases: number): string {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: bomb', 'data:', `  big: &big ${'x'.repeat(2_900_000)}`];
  for (let i = 0; i < aliases; i++) lines.push(`  k${i}: *big`);
  return lines.join('\n');
}

/**
 * A pod whose affinity holds `leaves` unknown fields at the bottom of a `depth`-deep chain, about
 * 2.9 MB. The pod schema types affinity, so they are pruned with a warning (fieldValidation Warn);
 * when the field was schemaless ('any', before the protobuf schemas), every leaf was kept, owned in
 * managedFields and compared on each write: 146 s for the deep one before the managed-fields tree
 * and the semantic-equality fix, 10 s after, and this bench's figures once typed.
 */
function deepPod(depth: number, leaves: number): string {
  let inner: Record<string, unknown> = {};
  for (let i = 0; i < leaves; i++) inner[`k${i}`] = 1;
  for (let d = 0; d < depth; d++) inner = { [`n${d}`]: inner };
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `deep${depth}` }, spec: { containers: [{ name: 'c', image: 'i' }], affinity: inner } });
}

const CASES: Case[] = [
  {
    name: 'json_patch_baseline',
    describe: 'a 2 KB JSON patch of the ConfigMap adding 21 labels (dryRun=All)',
    method: 'PATCH',
    path: `${cm}/one?dryRun=All`,
    contentType: 'application/json-patch+json',
    body: () =>
      JSON.stringify([
        { op: 'add', path: '/metadata/labels', value: {} },
        ...Array.from({ length: 21 }, (_, i) => ({ op: 'add', path: `/metadata/labels/l${i}`, value: 'v'.repeat(60) })),
      ]),
  },
  {
    name: 'json_patch_doubling',
    describe: 'the probe: a 2 KB JSON patch, an add then 21 copies of the subtree into itself (dryRun=All)',
    method: 'PATCH',
    path: `${cm}/one?dryRun=All`,
    contentType: 'application/json-patch+json',
    body: () => doublingPatch(21),
  },
  {
    name: 'yaml_baseline',
    describe: 'a 3 MB YAML ConfigMap without aliases: one 2.9 MB value (dryRun=All; refused by ConfigMap validation, over 1 MiB)',
    method: 'POST',
    path: `${cm}?dryRun=All`,
    contentType: 'application/yaml',
    body: () => aliasBomb(0),
  },
  {
    name: 'yaml_alias_bomb',
    describe: 'the probe: a 3 MB YAML ConfigMap with 99 aliases of a 2.9 MB scalar (dryRun=All)',
    method: 'POST',
    path: `${cm}?dryRun=All`,
    contentType: 'application/yaml',
    body: () => aliasBomb(99),
  },
  {
    name: 'yaml_deep_nesting',
    describe: 'a 3 MB YAML body of 1.5 million nested flow sequences',
    method: 'POST',
    path: `${cm}?dryRun=All`,
    contentType: 'application/yaml',
    body: () => '['.repeat(1_500_000) + ']'.repeat(1_500_000),
  },
  {
    name: 'unknown_fields_shallow',
    describe: 'a 2.9 MB pod create whose affinity carries 240,000 unknown fields one level down (pruned with a warning)',
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/pods`,
    contentType: 'application/json',
    body: () => deepPod(1, 240_000),
  },
  {
    name: 'unknown_fields_deep',
    describe: 'the same 240,000 unknown fields at the bottom of a 500-level chain',
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/pods`,
    contentType: 'application/json',
    body: () => deepPod(500, 240_000),
  },
];

interface Figures {
  server_survived: boolean;
  /** 0 when the connection failed (the server died). */
  status: number;
  message: string;
  request_ms: number;
  longest_probe_ms: number;
  probes: number;
  server_peak_rss_growth_mib: number | null;
  server_rss_after_mib: number | null;
}

async function runCase(c: Case, cleanup: Cleanup): Promise<Figures> {
  const s = await startApiServer();
  cleanup.child(s.proc);
  try {
    const pid = s.proc.pid!;
    if (procName(pid) !== 'node') throw new Error(`pid ${pid} is ${procName(pid)}, not node`);
    const created = await send(s, 'POST', cm, 'application/json', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' }, data: { a: 'b' } }));
    if (created.status !== 201) throw new Error(`create ConfigMap: ${created.status} ${created.text}`);
    const body = c.body();
    // Warm the probe's connection and the code paths of a GET.
    for (let i = 0; i < 50; i++) await probeOnce(s);
    const peakBefore = procMemMb(pid, 'VmHWM');
    let done = false;
    let longest = 0;
    let probes = 0;
    const probe = (async () => {
      while (!done) {
        longest = Math.max(longest, await probeOnce(s).catch(() => Infinity));
        probes++;
        // A server that died answers nothing more: stop probing it.
        if (longest === Infinity) return;
      }
    })();
    const t0 = performance.now();
    const res = await send(s, c.method, c.path, c.contentType, body);
    const requestMs = performance.now() - t0;
    done = true;
    await probe;
    let message = '';
    try {
      const m = (JSON.parse(res.text) as { message?: unknown }).message;
      message = (typeof m === 'string' ? m : res.text).slice(0, 200);
    } catch {
      message = res.text.slice(0, 200);
    }
    const alive = s.proc.exitCode === null && s.proc.signalCode === null;
    return {
      server_survived: alive,
      status: res.status,
      message,
      request_ms: round(requestMs, 1),
      longest_probe_ms: round(longest, 1),
      probes,
      server_peak_rss_growth_mib: alive ? round(procMemMb(pid, 'VmHWM') - peakBefore, 1) : null,
      server_rss_after_mib: alive ? round(procMemMb(pid, 'VmRSS'), 1) : null,
    };
  } finally {
    await s.stop();
  }
}

async function probeOnce(s: RunningApiServer): Promise<number> {
  const t = performance.now();
  const res = await request(`${s.url}/livez`, { dispatcher: s.anonymous });
  await res.body.text();
  return performance.now() - t;
}

async function send(s: RunningApiServer, method: 'POST' | 'PATCH', path: string, contentType: string, body: string): Promise<{ status: number; text: string }> {
  try {
    const res = await request(`${s.url}${path}`, { method, dispatcher: s.admin, headers: { 'content-type': contentType }, body, headersTimeout: 120_000, bodyTimeout: 120_000 });
    return { status: res.statusCode, text: await res.body.text() };
  } catch (err) {
    return { status: 0, text: err instanceof Error ? err.message : String(err) };
  }
}

export async function runHostileBodiesBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  const loadBefore = loadavg()[0];
  const cases: Record<string, Figures & { describe: string }> = {};
  for (const c of CASES) {
    if (only && !only.includes(c.name)) continue;
    progress(`${c.name}: ${c.describe}`);
    cases[c.name] = { describe: c.describe, ...(await runCase(c, cleanup)) };
    progress(`${c.name}: ${JSON.stringify(cases[c.name])}`);
  }
  return {
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model, node: process.version, load_average_1m: { before: round(loadBefore), after: round(loadavg()[0]) } },
    setup:
      'one fresh svc-apiserver (SQLite, admin client certificate) per case; the case is sent once while a probe client on its own connection asks GET /livez back to back; longest_probe_ms is the longest the server left the probe waiting; server_peak_rss_growth_mib is VmHWM after minus before',
    cases,
  };
}
