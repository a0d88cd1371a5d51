/**
 * `npm run bench -- podresources [--calls N]`: pod resources List latency with 100 pods holding 8
 * devices each (800 fake devices, the test doubles' devices and pods providers) on the real
 * server over a real unix socket with a real gRPC client, against a baseline measured in the same
 * run: a trivial unary call (List answering an empty response) on a second server on the same
 * kind of socket. Client and servers share this process (one event loop), in both measurements.
 * The rate limit is opened for the run (it would refuse all but 100 calls a second); the limiter
 * itself is one arithmetic step per call. The answer's in-process cost (build, encode, decode) is
 * reported beside the latencies.
 */
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { PodResourcesServer } from '../agent/podresources/pod-resources-server';
import { PodResourcesService } from '../agent/podresources/pod-resources-service';
import { bindUnixSocket } from '../agent/podresources/bind-socket';
import { loadPodResourcesProto } from '../agent/podresources/podresources-proto';
import type { ListPodResourcesResponse } from '../agent/podresources/wire-types';
import { fakeNode } from '../test/helpers/device-doubles';
import type { Cleanup } from './lib/cleanup';
import { progress } from './lib/progress';
import { percentile, ratio, round } from './lib/stats';

const PODS = 100;
const DEVICES_PER_POD = 8;

/**
 * Our goals for List with 100 pods x 8 devices (the issue asks for the figures; these bound them).
 * The tail is judged over the baseline's tail: on a shared machine the p99 of even a trivial call
 * is dominated by scheduling noise, which the baseline carries too.
 */
const GOALS = {
  list_p50_ms: { target: '<= 10', ok: (x: number) => x <= 10 },
  list_p99_over_baseline_ms: { target: '<= 50', ok: (x: number) => x <= 50 },
} as const;

const silent = { debug() {}, info() {}, warn() {}, error() {} };

type Unary = (req: object, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: ListPodResourcesResponse) => void) => void;

function numberArg(args: readonly string[], name: string, dflt: number): number {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} needs a positive number`);
  return v;
}

function lister(socket: string): { list: () => Promise<ListPodResourcesResponse>; close: () => void } {
  const Lister = loadPodResourcesProto();
  const c = new Lister(`unix://${socket}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': 64 * 1024 * 1024 }) as unknown as grpc.Client & { List: Unary };
  return {
    list: () => new Promise((resolve, reject) => c.List({}, { deadline: Date.now() + 30_000 }, (err, res) => (err ? reject(err) : resolve(res)))),
    close: () => c.close(),
  };
}

async function timed(fn: () => Promise<unknown>, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    into.push(performance.now() - t0);
  }
}

const figures = (xs: number[]) => ({ calls: xs.length, p50_ms: round(percentile(xs, 0.5), 3), p99_ms: round(percentile(xs, 0.99), 3), max_ms: round(Math.max(...xs), 3) });

export async function runPodResourcesBench(args: readonly string[], cleanup: Cleanup): Promise<object> {
  const calls = numberArg(args, '--calls', 3000);
  const loadBefore = loadavg()[0];
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-podres-'));
  cleanup.dir(dir);

  const { pods, devices } = fakeNode(PODS, DEVICES_PER_POD);
  const server = new PodResourcesServer({ socketPath: path.join(dir, 'kubelet.sock'), pods, devices, log: silent, qps: 1e12, burst: 1e12 });
  await server.start();
  cleanup.add('stop pod resources server', () => server.close());

  // Baseline: the same service, List answering an empty response at once.
  const trivial = new grpc.Server();
  trivial.addService(loadPodResourcesProto().service, {
    List: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { pod_resources: [] }),
    Get: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb({ code: grpc.status.UNIMPLEMENTED }),
    GetAllocatableResources: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb({ code: grpc.status.UNIMPLEMENTED }),
  });
  await bindUnixSocket(trivial, path.join(dir, 'trivial.sock'));
  cleanup.add('stop baseline server', () => void trivial.forceShutdown());

  const real = lister(path.join(dir, 'kubelet.sock'));
  const base = lister(path.join(dir, 'trivial.sock'));
  cleanup.add('close clients', () => {
    real.close();
    base.close();
  });

  const sample = await real.list();
  const devicesSeen = sample.pod_resources.reduce((n, p) => n + p.containers.reduce((m, c) => m + c.devices.reduce((k, d) => k + d.device_ids.length, 0), 0), 0);
  if (sample.pod_resources.length !== PODS || devicesSeen !== PODS * DEVICES_PER_POD) throw new Error(`List answered ${sample.pod_resources.length} pods and ${devicesSeen} devices`);

  // Where a call's time goes, without the transport: building the answer from the providers,
  // the server's protobuf encoding and the client's decoding (both proto-loader); each averaged
  // over 500 runs.
  const svcDef = loadPodResourcesProto().service.List;
  const service = new PodResourcesService(pods, devices);
  const avg = (fn: () => unknown) => {
    const t0 = performance.now();
    for (let i = 0; i < 500; i++) fn();
    return round((performance.now() - t0) / 500, 3);
  };
  const built = service.list();
  const wire = svcDef.responseSerialize(built);
  const responseBytes = wire.length;
  const breakdown = {
    build_ms: avg(() => service.list()),
    server_encode_ms: avg(() => svcDef.responseSerialize(built)),
    client_decode_ms: avg(() => svcDef.responseDeserialize(wire)),
  };

  progress(`warming up (200 calls each)`);
  await timed(real.list, 200, []);
  await timed(base.list, 200, []);

  // Interleaved rounds, so drift in machine load hits both sides alike.
  const rounds = 10;
  const per = Math.ceil(calls / rounds);
  const listMs: number[] = [];
  const baseMs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    progress(`round ${r + 1}/${rounds}: ${per} List calls (100 pods x 8 devices) and ${per} trivial calls`);
    await timed(real.list, per, listMs);
    await timed(base.list, per, baseMs);
  }

  const list = figures(listMs);
  const baseline = figures(baseMs);
  const goal = (name: keyof typeof GOALS, value: number) => ({ target: GOALS[name].target, value, met: GOALS[name].ok(value) });
  return {
    benchmark: 'podresources',
    setup: { pods: PODS, devices_per_pod: DEVICES_PER_POD, allocatable_devices: PODS * DEVICES_PER_POD, response_bytes: responseBytes, transport: 'unix socket, @grpc/grpc-js client and server in one process', rate_limit: 'opened for the run' },
    list,
    list_breakdown_in_process: breakdown,
    baseline: { trivial_unary: baseline },
    over_baseline: { p50_ms: round(list.p50_ms - baseline.p50_ms, 3), p99_ms: round(list.p99_ms - baseline.p99_ms, 3), p50_ratio: ratio(list.p50_ms, baseline.p50_ms), p99_ratio: ratio(list.p99_ms, baseline.p99_ms) },
    goals: { list_p50_ms: goal('list_p50_ms', list.p50_ms), list_p99_over_baseline_ms: goal('list_p99_over_baseline_ms', round(list.p99_ms - baseline.p99_ms, 3)) },
    load_average_1m: { before: round(loadBefore, 2), after: round(loadavg()[0], 2), cores: cpus().length },
  };
}
