/**
 * Container log rotation end to end on real peers: the test's own containerd, a real
 * svc-apiserver and a real svc-node with a tiny containerLogMaxSize. A pod writes numbered lines
 * quickly; the test watches the container's log directory and checks that rotated files appear
 * next to the live log, that older ones are gzipped (and decompress to CRI lines), that the
 * container never has more than containerLogMaxFiles files, and that after each rotation
 * containerd writes to a new live file (it really reopened the log) while the rotated one stays
 * as it was.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import test from 'ava';
import { GrpcRuntimeService } from '../../../agent/cri/grpc-client';
import { splitLeftovers } from '../../../agent/logs/rotated-log-files';
import { startContainerdNode, type ContainerdNode } from '../../helpers/containerd-node';
import { eventually, kubectlJson, kubectlStdin } from '../agent/agent-process';

const NODE = 'e2e-logrotate';
const MAX_FILES = 3;
const MAX_SIZE = '100Ki';
const INTERVAL_S = 3; // upstream's (and our) smallest allowed containerLogMonitorInterval

let node: ContainerdNode | undefined;

test.before(async () => {
  node = await startContainerdNode({
    nodeName: NODE,
    configLines: ['enableServer: false', `containerLogMaxSize: ${MAX_SIZE}`, `containerLogMaxFiles: ${MAX_FILES}`, `containerLogMonitorInterval: ${INTERVAL_S}s`],
  });
});

test.after.always(async () => {
  await node?.stop();
});

type PodJson = { status: { phase?: string; containerStatuses?: { containerID?: string }[] } };

/** Sequence numbers of the test's lines in a CRI log (content after "<time> <stream> <tag> "). */
function sequence(cri: Buffer): number[] {
  const out: number[] = [];
  for (const line of cri.toString('utf8').split('\n')) {
    const m = /^\S+ stdout [PF] line (\d+) x+$/.exec(line);
    if (m) out.push(Number(m[1]));
  }
  return out;
}

interface Sample {
  at: number;
  /** Names in the container's log directory belonging to its log (live and rotated). */
  names: string[];
}

test.serial('a chatty container has its log rotated: rotated files next to the live one, older ones gzipped, never more than containerLogMaxFiles, and containerd reopens the log', async (t) => {
  // About 200 bytes a line, 100 lines every 0.1 s: far more than containerLogMaxSize per monitor interval.
  const pad = 'x'.repeat(185);
  const script = `n=0; while true; do i=0; while [ $i -lt 100 ]; do echo "line $n ${pad}"; n=$((n+1)); i=$((i+1)); done; sleep 0.1; done`;
  const { ctrd, api, agent } = node!;
  t.like(await agent.waitForLog('container log rotation started', 10_000), { maxSizeBytes: 100 * 1024, maxFiles: MAX_FILES, intervalMs: INTERVAL_S * 1000 });
  const manifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'chatty' },
    // busybox as PID 1 ignores SIGTERM; sharing the sandbox's PID namespace lets it stop at once.
    spec: { nodeName: NODE, shareProcessNamespace: true, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: ctrd.image, imagePullPolicy: 'Never', command: ['sh', '-c', script] }] },
  };
  await kubectlStdin(api.kubeconfig, ['create', '-f', '-'], JSON.stringify(manifest));
  const pod = await eventually(
    'chatty Running',
    async () => {
      const p = await kubectlJson<PodJson>(api.kubeconfig, ['get', 'pod', 'chatty']);
      return p.status.phase === 'Running' && p.status.containerStatuses?.[0]?.containerID ? p : undefined;
    },
    60_000,
    300,
  );
  const id = pod.status.containerStatuses![0].containerID!.replace('containerd://', '');
  const cri = new GrpcRuntimeService(ctrd.endpoint, ctrd.endpoint, { timeoutMs: 30_000 });
  let live: string;
  try {
    live = (await cri.containerStatus(id)).status.logPath;
  } finally {
    cri.close();
  }
  t.true(live.startsWith(ctrd.logRoot + path.sep), live);
  const logDir = path.dirname(live);
  const base = path.basename(live);
  const running = Date.now();

  // Watch the directory until four distinct rotations have been seen.
  const samples: Sample[] = [];
  const firstSeen = new Map<string, number>();
  const rotatedOf = (names: string[]) => names.filter((n) => n !== base).map((n) => n.replace(/\.gz$/, '')).filter((n) => !n.endsWith('.tmp'));
  await eventually(
    'four rotations',
    () => {
      const names = readdirSync(logDir).filter((n) => n === base || n.startsWith(`${base}.`)).sort();
      samples.push({ at: Date.now() - running, names });
      for (const r of rotatedOf(names)) if (!firstSeen.has(r)) firstSeen.set(r, Date.now() - running);
      return firstSeen.size >= 4 ? true : undefined;
    },
    90_000,
    100,
  );
  t.log(`rotations first seen at ${[...firstSeen.entries()].map(([n, ms]) => `${n.slice(base.length + 1)} +${ms} ms`).join(', ')} after the pod ran`);

  // Never more than MAX_FILES log files. A rotation in progress briefly shows a .tmp, or a file
  // next to its finished .gz; those are not logs (upstream's GetAllLogs skips them too).
  let most = 0;
  for (const s of samples) {
    const counted = [...splitLeftovers(s.names.filter((n) => n !== base)).inUse, ...s.names.filter((n) => n === base)];
    most = Math.max(most, counted.length);
    t.true(counted.length <= MAX_FILES, `+${s.at} ms: ${s.names.join(' ')}`);
  }
  t.log(`${samples.length} samples of the log directory, at most ${most} log files`);

  // Names sort by time; all rotated files but the newest are gzipped. Read between two rotations
  // (a read that a rotation disturbs is retried).
  const { names: settled, older, newest } = await eventually(
    'a directory between rotations',
    () => {
      const names = readdirSync(logDir).filter((n) => n.startsWith(`${base}.`)).sort();
      if (names.length !== MAX_FILES - 1 || names.some((n) => n.endsWith('.tmp'))) return undefined;
      return { names, older: gunzipSync(readFileSync(path.join(logDir, names[0]))), newest: readFileSync(path.join(logDir, names[1])) };
    },
    30_000,
    100,
  );
  const stamped = (suffix: string) => new RegExp(`^${base.replace('.', '\\.')}\\.\\d{8}-\\d{6}${suffix}$`);
  t.regex(settled[0], stamped('\\.gz'));
  t.regex(settled[1], stamped(''));
  const olderSeq = sequence(older);
  const newer = sequence(newest);
  t.true(olderSeq.length > 0 && newer.length > 0);
  // Each file continues where the previous one ended: nothing lost, nothing repeated.
  t.is(newer[0], olderSeq.at(-1)! + 1);
  t.true(newer.every((n, i) => i === 0 || n === newer[i - 1] + 1));

  // containerd writes to the new live file: it grows and continues the sequence, while the
  // rotated file stays as it was.
  const continued = await eventually(
    'the live log continuing the sequence',
    () => {
      const seq = sequence(readFileSync(live));
      return seq.length > 0 && seq[0] > newer.at(-1)! ? seq : undefined;
    },
    30_000,
    200,
  );
  t.true(continued.every((n, i) => i === 0 || n === continued[i - 1] + 1));
  const rotatedNow = path.join(logDir, settled[1]);
  // It may have been compressed by a rotation meanwhile; if not, it has not changed.
  try {
    t.is(statSync(rotatedNow).size, newest.length);
  } catch (e) {
    t.is((e as NodeJS.ErrnoException).code, 'ENOENT');
  }
  t.is(agent.logs.filter((l) => l['component'] === 'container-logs' && Number(l['level']) >= 40).length, 0, 'no rotation warnings or errors');
});
