import { loadavg } from 'node:os';
import { request } from 'undici';
import { startApiServer, type RunningApiServer } from '../test/helpers/apiserver-process';
import type { Cleanup } from './lib/cleanup';
import { runClosedLoop, sleep } from './lib/load';
import { procCpuPrecise } from './lib/proc-cpu';
import { procName } from './lib/proc-stats';
import { progress } from './lib/progress';
import { median, round } from './lib/stats';

/** Issue 22's goal: a custom resource costs at most 1.5 times a ConfigMap of the same size in server CPU per request. */
const GOAL_MAX_RATIO = 1.5;
const FIELDS = 30;
const FULL = { clients: 8, perPart: 400, parts: 6 };
const QUICK = { clients: 8, perPart: 100, parts: 2 };

/** 30 fields: strings with a pattern and a length, integers with bounds, alternating; 5 CEL rules over them. */
function crd(): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < FIELDS; i++) {
    properties[`f${i}`] = i % 2 === 0 ? { type: 'string', maxLength: 64, pattern: '^[a-z0-9-]+$' } : { type: 'integer', minimum: 0, maximum: 1_000_000 };
  }
  const rules = [
    { rule: 'self.f1 <= self.f3 + 1000000' },
    { rule: 'self.f0.size() > 0' },
    { rule: '!has(self.f5) || self.f5 >= 0' },
    { rule: 'self.f2.startsWith("v")' },
    { rule: 'self.f7 + self.f9 < 3000000' },
  ];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'benchitems.bench.example.com' },
    spec: {
      group: 'bench.example.com',
      scope: 'Namespaced',
      names: { plural: 'benchitems', kind: 'BenchItem' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties, 'x-kubernetes-validations': rules } } } } }],
    },
  };
}

/** The same 30 values: as a custom resource's spec, and as a ConfigMap's data (strings). */
function values(i: number): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (let f = 0; f < FIELDS; f++) out[`f${f}`] = f % 2 === 0 ? `value-${f}-${i}` : 1000 + f + i;
  return out;
}

interface Kind {
  name: string;
  collection: string;
  body(i: number): Record<string, unknown>;
}

const KINDS: Kind[] = [
  {
    name: 'configmap',
    collection: '/api/v1/namespaces/default/configmaps',
    body: (i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: Object.fromEntries(Object.entries(values(i)).map(([k, v]) => [k, String(v)])) }),
  },
  {
    name: 'custom_resource',
    collection: '/apis/bench.example.com/v1/namespaces/default/benchitems',
    body: (i) => ({ apiVersion: 'bench.example.com/v1', kind: 'BenchItem', metadata: { name: `cr-${i}` }, spec: values(i) }),
  },
];

async function call(api: RunningApiServer, method: 'GET' | 'POST', path: string, body?: unknown): Promise<number> {
  const res = await request(`${api.url}${path}`, { method, dispatcher: api.admin, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  await res.body.text();
  return res.statusCode;
}

/**
 * `npm run bench -- crd [--quick]` (issue 22, Performance): server CPU per create and per get of a
 * custom resource with a 30-field structural schema and 5 CEL rules, against a ConfigMap holding
 * the same 30 values, on one server in the same run; parts alternate between the two kinds and the
 * ratio is the median of the per-part ratios.
 */
export async function runCrdBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const plan = args.includes('--quick') ? QUICK : FULL;
  const notes: string[] = plan === QUICK ? ['--quick: reduced counts, figures are not to be quoted'] : [];
  const loadBefore = loadavg()[0];
  progress('starting svc-apiserver');
  const api = await startApiServer();
  cleanup.child(api.proc);
  cleanup.add('stop svc-apiserver', async () => void (await api.stop()));
  const pid = api.proc.pid!;
  if (procName(pid) !== 'node') notes.push(`pid ${pid} is ${procName(pid)}, not node: server CPU figures may be the launcher's`);
  if ((await call(api, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd())) !== 201) throw new Error('the CRD was not created');
  for (let i = 0; i < 200 && (await call(api, 'GET', KINDS[1].collection)) !== 200; i++) await sleep(50);

  // Warm-up, not measured: JIT, the CEL library's first load, the first compile of each path.
  const WARMUP = 100;
  for (const kind of KINDS) {
    await runClosedLoop(plan.clients, WARMUP, async (i) => {
      if ((await call(api, 'POST', kind.collection, kind.body(i))) !== 201) throw new Error(`${kind.name} warm-up create failed`);
    });
  }
  const cpu: Record<string, { create: number[]; get: number[] }> = { configmap: { create: [], get: [] }, custom_resource: { create: [], get: [] } };
  let offset = WARMUP;
  for (let part = 0; part < plan.parts; part++) {
    for (const kind of part % 2 === 0 ? KINDS : [...KINDS].reverse()) {
      const base = offset;
      let c0 = procCpuPrecise(pid);
      await runClosedLoop(plan.clients, plan.perPart, async (i) => {
        if ((await call(api, 'POST', kind.collection, kind.body(base + i))) !== 201) throw new Error(`${kind.name} create failed`);
      });
      cpu[kind.name].create.push(((procCpuPrecise(pid) - c0) * 1e6) / plan.perPart);
      c0 = procCpuPrecise(pid);
      await runClosedLoop(plan.clients, plan.perPart, async (i) => {
        const name = kind.name === 'configmap' ? `cm-${base + i}` : `cr-${base + i}`;
        if ((await call(api, 'GET', `${kind.collection}/${name}`)) !== 200) throw new Error(`${kind.name} get failed`);
      });
      cpu[kind.name].get.push(((procCpuPrecise(pid) - c0) * 1e6) / plan.perPart);
    }
    offset += plan.perPart;
    progress(`part ${part + 1}/${plan.parts} done`);
  }
  const perPartRatio = (verb: 'create' | 'get') => median(cpu.custom_resource[verb].map((c, i) => c / cpu.configmap[verb][i]));
  const createRatio = round(perPartRatio('create'));
  const getRatio = round(perPartRatio('get'));
  return {
    benchmark: 'crd',
    schema: { fields: FIELDS, cel_rules: 5 },
    clients: plan.clients,
    requests_per_part: plan.perPart,
    parts: plan.parts,
    server_cpu_us_per_request: {
      configmap: { create: round(median(cpu.configmap.create), 0), get: round(median(cpu.configmap.get), 0) },
      custom_resource: { create: round(median(cpu.custom_resource.create), 0), get: round(median(cpu.custom_resource.get), 0) },
    },
    ratio_custom_to_configmap: { create: createRatio, get: getRatio },
    goal: { max_ratio: GOAL_MAX_RATIO, met: createRatio <= GOAL_MAX_RATIO && getRatio <= GOAL_MAX_RATIO },
    load_average_before: round(loadBefore),
    notes,
  };
}
