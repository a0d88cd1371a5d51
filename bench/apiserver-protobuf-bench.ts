import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { configMapSchema } from '../apiserver/registry/types/configmaps';
import { podSchema } from '../apiserver/registry/types/pod-schema';
import { startApiServer } from '../test/helpers/apiserver-process';
import type { Cleanup } from './lib/cleanup';
import { compareEncodings, pairedRatios, PHASES, type EncodingPlan, type RatioSpread } from './lib/encoding-requests';
import { JSON_ENCODING, PROTOBUF_ENCODING } from './lib/encodings';
import { configMap, ensureNamespace } from './lib/http-figures';
import { measureListEncodings } from './lib/pod-list-encodings';
import { fillPods } from './lib/pod-list';
import { procName } from './lib/proc-stats';
import { progress } from './lib/progress';
import { ratio, round } from './lib/stats';
import { stopApi } from './lib/stop-api';
import { adminTls, Target } from './lib/target';

/** The sizes of one run; --quick shrinks them to check the bench itself, not to quote. */
interface Plan {
  requests: Omit<EncodingPlan, 'namespace' | 'schema' | 'object'>;
  list: { pods: number; createClients: number; runs: number };
}

const FULL: Plan = {
  requests: { warmupCreates: 4000, warmupGets: 1000, createClients: 32, getClients: 64, createsPerPart: 1000, getsPerPart: 2500, firstGetsPerPart: 1000, rounds: 8 },
  list: { pods: 10_000, createClients: 64, runs: 5 },
};

const QUICK: Plan = {
  requests: { warmupCreates: 50, warmupGets: 100, createClients: 32, getClients: 64, createsPerPart: 100, getsPerPart: 200, firstGetsPerPart: 100, rounds: 2 },
  list: { pods: 600, createClients: 64, runs: 3 },
};

/**
 * Issue 17's goals for protobuf, each against JSON measured in the same run: the median over rounds
 * of the per-round ratio. `clear` asks more: the interquartile range of the rounds' ratios lies on
 * the goal's side of 1 (three rounds in four, not one lucky median).
 */
const GOALS = {
  creates_per_second_vs_json: { target: '>= 1', ok: (x: number) => x >= 1 },
  gets_per_second_vs_json: { target: '>= 1', ok: (x: number) => x >= 1 },
  creates_server_cpu_vs_json: { target: '<= 1', ok: (x: number) => x <= 1 },
  gets_server_cpu_vs_json: { target: '<= 1', ok: (x: number) => x <= 1 },
  list_served_vs_json: { target: '<= 0.7', ok: (x: number) => x <= 0.7 },
} as const;

/**
 * `npm run bench -- apiserver --protobuf [--quick]` (issue 17): ConfigMap creates, gets and first
 * gets, and a whole list of 10,000 pods, in protobuf (application/vnd.kubernetes.protobuf) against
 * JSON on the same svc-apiserver in the same run, rounds interleaved; ratios are medians over rounds
 * with their spread (see bench/README.md).
 */
export async function runApiServerProtobufBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const plan = args.includes('--quick') ? QUICK : FULL;
  const notes: string[] = [];
  if (plan === QUICK) notes.push('--quick: reduced counts, figures are not comparable with a full run');
  const loadBefore = loadavg()[0];
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-apiserver-pb-'));
  cleanup.dir(dataDir);
  // --cpu-prof DIR: the server writes a V8 CPU profile there when it exits (every part of both
  // encodings is in the one profile).
  const profIndex = args.indexOf('--cpu-prof');
  const cpuProf = profIndex < 0 ? undefined : args[profIndex + 1];
  if (cpuProf) notes.push(`--cpu-prof: the server ran under the V8 profiler (${cpuProf}); its figures are not comparable with a plain run`);
  progress('starting svc-apiserver');
  const api = await startApiServer({
    dataDir,
    ...(cpuProf ? { env: { NODE_OPTIONS: `--require ${join(__dirname, 'lib', 'cpu-profile-preload.js')}`, SVC_CPU_PROFILE_DIR: cpuProf } } : {}),
  });
  cleanup.child(api.proc);
  cleanup.add('stop svc-apiserver', () => stopApi(api));
  const pid = api.proc.pid!;
  if (procName(pid) !== 'node') notes.push(`pid ${pid} is ${procName(pid)}, not node: server CPU figures may be the launcher's`);
  const target = new Target('api', '127.0.0.1', api.port, adminTls(dataDir));
  const encodings = [JSON_ENCODING, PROTOBUF_ENCODING];

  await ensureNamespace(target, 'bench-pb');
  const requests = await compareEncodings(target, pid, encodings, {
    ...plan.requests,
    namespace: 'bench-pb',
    schema: configMapSchema,
    object: (name) => configMap(name) as Record<string, unknown>,
  });
  const fill = await fillPods(target, { namespace: 'bench-pods', pods: plan.list.pods, createClients: plan.list.createClients });
  const list = await measureListEncodings(target, pid, encodings, { collection: '/api/v1/namespaces/bench-pods/pods', itemSchema: podSchema, pods: plan.list.pods, runs: plan.list.runs });
  await stopApi(api);

  const paired = Object.fromEntries(PHASES.map((p) => [p, pairedRatios(requests[p].protobuf, requests[p].json)])) as Record<(typeof PHASES)[number], ReturnType<typeof pairedRatios>>;
  const spreads: Record<string, RatioSpread | null> = {
    creates_per_second_vs_json: paired.creates.per_second,
    gets_per_second_vs_json: paired.gets.per_second,
    first_gets_per_second_vs_json: paired.first_gets.per_second,
    creates_server_cpu_vs_json: paired.creates.server_cpu,
    gets_server_cpu_vs_json: paired.gets.server_cpu,
    first_gets_server_cpu_vs_json: paired.first_gets.server_cpu,
  };
  const ratios: Record<string, number | null> = {
    ...Object.fromEntries(Object.entries(spreads).map(([k, v]) => [k, v?.median ?? null])),
    list_served_vs_json: ratio(list.protobuf.served_ms, list.json.served_ms),
    first_list_served_vs_json: ratio(list.protobuf.first_served_ms, list.json.first_served_ms),
    list_server_cpu_vs_json: ratio(list.protobuf.server_cpu_ms, list.json.server_cpu_ms),
    list_bytes_vs_json: ratio(list.protobuf.bytes, list.json.bytes),
    list_with_client_decode_vs_json: ratio(list.protobuf.whole_list_ms, list.json.whole_list_ms),
  };
  if (loadBefore > 1.5) notes.push(`the machine was busy (1-minute load ${loadBefore.toFixed(2)} on ${cpus().length} cores before the run): figures are noisier than usual`);
  const goals: Record<string, { target: string; value: number | null; met: boolean; clear?: boolean }> = {};
  for (const [name, g] of Object.entries(GOALS)) {
    const value = ratios[name];
    const spread = spreads[name];
    goals[name] = { target: g.target, value, met: value !== null && g.ok(value), ...(spread ? { clear: g.ok(spread.p25) && g.ok(spread.p75) } : {}) };
  }
  return {
    benchmark: 'apiserver --protobuf',
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, load_average_1m: { before: round(loadBefore), after: round(loadavg()[0]) } },
    creates: requests.creates,
    gets: requests.gets,
    first_gets: requests.first_gets,
    list: { pods: plan.list.pods, fill, ...list },
    ratios,
    spreads,
    goals,
    notes,
  };
}
