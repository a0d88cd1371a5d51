import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Simulator } from '../agent/cri/simulator';
import { WRITABLE_LAYER_ANNOTATION } from '../agent/cri/sim-checkpoint';
import { startApiServer } from '../test/helpers/apiserver-process';
import { kubectlJson, kubectlStdin, eventually } from '../test/e2e/agent/agent-process';
import { startNode } from '../test/e2e/checkpoint/checkpoint-env';
import type { Cleanup } from './lib/cleanup';
import { progress } from './lib/progress';
import { percentile, round } from './lib/stats';

/** Issue 6's goal: what the endpoint adds (authn + cached authz + verification + HTTPS) to the runtime call, at the median. */
const GOAL_OVERHEAD_P50_MS = 10;
const LAYER_BYTES = 10 * 1024 * 1024;
const NODE = 'bench-ckpt-node';
const USER = 'bench-checkpointer';
const TOKEN = 'bench-checkpointer-token-0123456789';

function numberArg(args: readonly string[], flag: string, dflt: number): number {
  const i = args.indexOf(flag);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${flag} wants a positive integer`);
  return v;
}

function summary(sample: readonly number[]): { p50_ms: number; p99_ms: number; n: number } {
  return { p50_ms: round(percentile(sample, 0.5)), p99_ms: round(percentile(sample, 0.99)), n: sample.length };
}

/**
 * `npm run bench -- checkpoint [--iterations N]`: POST /checkpoint on a real svc-node (sim:// runtime,
 * a real svc-apiserver doing the token review and the access review, both cached after the first
 * request) for a container whose archive carries a 10 MB writable layer, against a direct
 * CheckpointContainer call on a simulator built in this process with the same layer size (the
 * agent's simulator lives inside the agent process, so it cannot be called directly from outside).
 */
export async function runCheckpointBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const iterations = numberArg(args, '--iterations', 40);
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-ckpt-'));
  cleanup.dir(dir);
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, `${TOKEN},${USER},uid-${USER}\n`);
  progress('starting svc-apiserver');
  const api = await startApiServer({ dataDir: join(dir, 'apiserver'), args: [`--token-auth-file=${tokens}`] });
  cleanup.child(api.proc);
  cleanup.add('stop svc-apiserver', async () => void (await api.stop('SIGTERM')));
  for (const obj of [
    { apiVersion: 'rbac.authorization.svc.io/v1', kind: 'ClusterRole', metadata: { name: USER }, rules: [{ apiGroups: [''], resources: ['nodes/checkpoint'], verbs: ['create'] }] },
    {
      apiVersion: 'rbac.authorization.svc.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: USER },
      roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: USER },
      subjects: [{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: USER }],
    },
  ]) {
    const plural = obj.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings';
    const res = await request(`${api.url}/apis/rbac.authorization.svc.io/v1/${plural}`, { method: 'POST', dispatcher: api.admin, headers: { 'content-type': 'application/json' }, body: JSON.stringify(obj) });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`creating ${plural}: ${res.statusCode} ${text}`);
  }
  progress('starting svc-node (sim:// runtime)');
  const node = await startNode(api, join(dir, 'node'), NODE, ['checkpointRetention:', '  schedule: ""']);
  cleanup.child(node.agent.proc);
  cleanup.add('stop svc-node', async () => void (await node.agent.stop('SIGTERM')));
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'big', namespace: 'default', annotations: { [WRITABLE_LAYER_ANNOTATION]: String(LAYER_BYTES) } },
    spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: 'svc.local/busybox:latest', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] },
  };
  await kubectlStdin(api.kubeconfig, ['create', '-f', '-'], JSON.stringify(pod));
  await eventually('pod big running', async () => {
    const p = await kubectlJson<{ status: { containerStatuses?: { state: { running?: object } }[] } }>(api.kubeconfig, ['get', 'pod', 'big']);
    return p.status.containerStatuses?.[0]?.state.running ? true : undefined;
  }, 60_000, 300);

  const https = new Agent({ connect: { rejectUnauthorized: false }, keepAliveTimeout: 60_000 });
  cleanup.add('close the HTTPS client', () => https.close());
  const post = async (): Promise<{ ms: number; file: string }> => {
    const t0 = performance.now();
    const res = await request(`https://127.0.0.1:${node.port}/checkpoint/default/big/app`, { method: 'POST', dispatcher: https, headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await res.body.text();
    const ms = performance.now() - t0;
    if (res.statusCode !== 200) throw new Error(`POST /checkpoint: ${res.statusCode} ${text}`);
    return { ms, file: (JSON.parse(text) as { items: string[] }).items[0] };
  };
  // The first request pays the TokenReview and the SubjectAccessReview; later ones hit both caches.
  progress('warming up (first request reviews the token and the access)');
  const first = await post();
  const archiveBytes = statSync(first.file).size;
  rmSync(first.file, { force: true });
  for (let i = 0; i < 3; i++) rmSync((await post()).file, { force: true });

  // The baseline simulator, warmed up like the endpoint; the two are then measured alternately so
  // that machine noise (other processes on a shared box) falls on both alike.
  const sim = new Simulator({ name: 'bench', behaviours: [{ checkpointLayerBytes: LAYER_BYTES }], writeLogs: false });
  await sim.connect();
  const sb = { metadata: { name: 'big', namespace: 'default', uid: 'uid-big', attempt: 0 }, hostname: 'big', labels: {}, annotations: {} };
  const sandboxId = await sim.runPodSandbox(sb);
  const cid = await sim.createContainer(sandboxId, { metadata: { name: 'app', attempt: 0 }, image: { image: 'svc.local/busybox:latest' }, command: ['sleep', '3600'] }, sb);
  await sim.startContainer(cid);
  const outDir = join(dir, 'direct');
  mkdirSync(outDir, { mode: 0o700 });
  const directCall = async (i: number): Promise<{ ms: number; bytes: number }> => {
    const file = join(outDir, `checkpoint-${i}.tar`);
    const t0 = performance.now();
    await sim.checkpointContainer(cid, file, 0);
    const ms = performance.now() - t0;
    const bytes = statSync(file).size;
    rmSync(file, { force: true });
    return { ms, bytes };
  };
  let directBytes = 0;
  for (let i = 0; i < 4; i++) directBytes = (await directCall(i)).bytes;

  progress(`POST /checkpoint and direct CheckpointContainer, alternately, x ${iterations}`);
  const endpoint: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const r = await post();
    endpoint.push(r.ms);
    // Not timed: keep the disk from filling with 10 MB archives.
    rmSync(r.file, { force: true });
    direct.push((await directCall(i)).ms);
  }
  sim.close();

  const e = summary(endpoint);
  const d = summary(direct);
  const overheadP50 = round(e.p50_ms - d.p50_ms);
  return {
    benchmark: 'checkpoint',
    archive_bytes: archiveBytes,
    direct_archive_bytes: directBytes,
    first_request_ms: round(first.ms),
    machine: { cpus: cpus().length, load_avg_1m: round(loadavg()[0]) },
    endpoint: e,
    direct_cri_call: d,
    overhead: { p50_ms: overheadP50, p99_ms: round(e.p99_ms - d.p99_ms) },
    goals: {
      overhead_p50_ms: { target: `<= ${GOAL_OVERHEAD_P50_MS}`, value: overheadP50, met: overheadP50 <= GOAL_OVERHEAD_P50_MS },
    },
    notes: [
      'endpoint: HTTPS POST /checkpoint with a bearer token (TokenReview and SubjectAccessReview answers cached by the agent), runtime call, chmod and tar verification, on a real svc-node process',
      "baseline: the agent's simulator runs inside the agent process, so the direct CheckpointContainer call is made on a simulator constructed in the bench process writing the same 10 MB writable layer",
      'first_request_ms includes the uncached token and access reviews and is not in the samples',
      'the two are measured alternately in one run; on a shared, loaded machine the difference of two ~30-60 ms medians is noisy (it can come out negative)',
    ],
  };
}
