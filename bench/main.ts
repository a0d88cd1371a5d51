/**
 * Benchmark entry: `npm run bench -- <name> [options]`. Each benchmark prints one JSON document on
 * stdout (progress goes to stderr) and undoes everything it started, however it ends.
 */
import { runAdmissionBench } from './admission-bench';
import { runAgentIdleBench } from './agent-idle-bench';
import { runApiServerBench } from './apiserver-bench';
import { runAuthnBench } from './authn-bench';
import { runAuthzBench } from './authz-bench';
import { runCheckpointBench } from './checkpoint-bench';
import { runCrdBench } from './crd-bench';
import { runDevicesBench } from './devices-bench';
import { runDnsBench } from './dns-bench';
import { runHeartbeatScaleBench } from './heartbeat-scale-bench';
import { runHostileBodiesBench } from './hostile-bodies-bench';
import { runListSnapshotsBench } from './list-snapshots-bench';
import { runPodResourcesBench } from './podresources-bench';
import { runPodStartupBench } from './pod-startup-bench';
import { runProxyBench } from './proxy-bench';
import { runStreamingBench } from './streaming-bench';
import { runStreamingContainerdBench } from './streaming-containerd-bench';
import { runWorkloadsBench } from './workloads-bench';
import { Cleanup } from './lib/cleanup';
import { progress } from './lib/progress';

interface Benchmark {
  describe: string;
  /** Runs the benchmark; returns the JSON result. Registers with cleanup whatever it starts. */
  run(args: readonly string[], cleanup: Cleanup): Promise<object>;
}

/** Add a benchmark here: one line each. */
const BENCHMARKS: Record<string, Benchmark> = {
  apiserver: { describe: 'svc-apiserver creates, gets, lists, watch fan-out, against the raw store and a floor HTTPS server', run: runApiServerBench },
  'agent-idle': { describe: 'one registered svc-node (sim:// runtime) idle for 60 s: RSS and CPU against a bare Node.js process', run: runAgentIdleBench },
  authn: { describe: 'GET through svc-apiserver per authentication method (token, bootstrap token, client cert, SA JWT) against anonymous', run: runAuthnBench },
  authz: { describe: 'RBAC decisions/s with 1,000 roles and 5,000 bindings, and GET throughput with Node,RBAC against AlwaysAllow', run: runAuthzBench },
  proxy: { describe: 'issue 24: svc-node\'s proxy syncing 1,000 Services x 10 endpoints into nftables (full and incremental, against one nft invocation), and HTTP throughput through a cluster IP against the endpoint directly', run: runProxyBench },
  crd: { describe: 'issue 22: server CPU per create and get of a custom resource (30-field structural schema, 5 CEL rules) against a ConfigMap of the same values', run: runCrdBench },
  checkpoint: { describe: 'POST /checkpoint on svc-node (sim://, token auth, 10 MB archive) against a direct CRI CheckpointContainer call', run: runCheckpointBench },
  devices: {
    describe: 'issue 5: Allocate round trips through the device manager for 1,000 containers against direct gRPC Allocate calls, then the podresources figures',
    run: async (args, cleanup) => ({ allocate: await runDevicesBench(args, cleanup), pod_resources_list: await runPodResourcesBench(args, cleanup) }),
  },
  'pod-startup': { describe: 'API create → Running on svc-node against raw CRI calls, on real containerd (30 pods) and the simulator (1,000 pods)', run: runPodStartupBench },
  'heartbeat-scale': { describe: 'simulated node Lease renewals every 10 s against one svc-apiserver, ramping 250..2000 nodes', run: runHeartbeatScaleBench },
  'hostile-bodies': { describe: 'issue 16: one hostile body (JSON patch self-copies, YAML aliases, deep YAML, unknown fields by the hundred thousand) against a benign one: request time, longest stall of a probe client, peak memory', run: runHostileBodiesBench },
  podresources: { describe: 'pod resources List latency, 100 pods x 8 devices, over the unix socket, against a trivial gRPC call', run: runPodResourcesBench },
  admission: { describe: 'issue 23: ConfigMap creates with no policy, with 10 ValidatingAdmissionPolicies, with one local HTTPS validating webhook, and audited at Metadata, interleaved in one run', run: runAdmissionBench },
  streaming: { describe: 'issue 21: exec -- true round trips and a 100 MB port-forward through svc-apiserver and svc-node (simulator) against the agent directly and plain TCP', run: runStreamingBench },
  'streaming-containerd': { describe: "issue 21's exec goal on real containerd: exec -- true through svc-apiserver and svc-node against a CRI Exec and containerd's own stream URL called directly", run: runStreamingContainerdBench },
  dns: { describe: 'issue 24: queries/s for a service name on svc-node\'s cluster DNS server against dnsmasq (or a minimal responder) answering a hosts-file name', run: runDnsBench },
  'list-snapshots': { describe: 'issue 23: every continue page of a 5,000-object list at an exact older revision from the ListFromCacheSnapshot snapshots against the SQLite store, in process', run: runListSnapshotsBench },
  workloads: { describe: 'issue 19: a Deployment scaled 0 → 1,000 replicas on 20 simulated nodes and rolled, against 1,000 bare pod creates: time to all Available, CPU per pod', run: runWorkloadsBench },
};

/** The whole run is killed past this, so a hung server cannot hold the machine. */
const DEADLINE_MS = 8 * 60_000;

async function main(argv: readonly string[]): Promise<number> {
  const name = argv[0];
  const bench = name ? BENCHMARKS[name] : undefined;
  if (!bench) {
    process.stderr.write(`usage: npm run bench -- <name>\n\n${Object.entries(BENCHMARKS).map(([n, b]) => `  ${n.padEnd(18)} ${b.describe}`).join('\n')}\n`);
    return 2;
  }
  const cleanup = new Cleanup();
  process.on('exit', () => cleanup.final());
  const interrupted = (signal: NodeJS.Signals) => {
    progress(`${signal}: cleaning up`);
    void cleanup.runAll().then(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const deadline = setTimeout(() => {
    progress(`benchmark ${name} exceeded ${DEADLINE_MS / 1000}s: aborting`);
    void cleanup.runAll().then(() => process.exit(1));
  }, DEADLINE_MS);
  deadline.unref();
  try {
    const result = await bench.run(argv.slice(1), cleanup);
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return 0;
  } catch (err) {
    progress(`benchmark ${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  } finally {
    clearTimeout(deadline);
    await cleanup.runAll();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
