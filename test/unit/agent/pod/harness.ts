/**
 * The pod machinery (PodManager) on the CRI simulator and the in-memory API client, with fake
 * time: pods are seeded into the fake API, time moves only in `until`/`advance`, and the
 * simulator's state and the pod's API status are read back for assertions.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Simulator } from '../../../../agent/cri/simulator';
import type { SimulatorOptions } from '../../../../agent/cri/sim-options';
import type { CallOptions } from '../../../../agent/cri/runtime-service';
import type { AuthConfig, ContainerConfig, ContainerStatus as CriContainerStatus, ImageSpec, PodSandboxConfig } from '../../../../agent/cri/types';
import { podsResource, configMapsResource } from '../../../../agent/pod/config-objects';
import { PodManager, type PodManagerOptions } from '../../../../agent/pod/pod-manager';
import type { Container, Pod, PodSpec, PodStatus } from '../../../../agent/api/core-v1';
import { secretsResource } from '../../../../agent/client/resources';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock, flush } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';

export const NODE = 'node-1';

/** The simulator, recording the configs and pulls the agent sends. */
export class RecordingSimulator extends Simulator {
  readonly created: ContainerConfig[] = [];
  readonly sandboxes: PodSandboxConfig[] = [];
  readonly pulls: string[] = [];

  override async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    this.created.push(structuredClone(config));
    return super.createContainer(podSandboxId, config, sandboxConfig, opts);
  }

  override async runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string, opts?: CallOptions): Promise<string> {
    this.sandboxes.push(structuredClone(config));
    return super.runPodSandbox(config, runtimeHandler, opts);
  }

  override async pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    this.pulls.push(image.image);
    return super.pullImage(image, auth, sandboxConfig, opts);
  }

  /** The last config created for a container name. */
  lastConfig(name: string): ContainerConfig | undefined {
    return this.created.filter((c) => c.metadata.name === name).at(-1);
  }
}
export const HOST_IP = '192.168.50.10';

export interface Harness {
  clock: FakeClock;
  sim: RecordingSimulator;
  api: FakeApiClient;
  log: MemLog;
  mgr: PodManager;
  root: string;
  /** Seeds a pod bound to the node; resolves the stored pod (with uid). */
  createPod(name: string, spec: Partial<PodSpec> & { containers: Container[] }, meta?: Partial<Pod['metadata']>): Pod;
  /** The pod's status in the fake API. */
  status(name: string, namespace?: string): PodStatus | undefined;
  /** The stored pod. */
  pod(name: string, namespace?: string): Pod | undefined;
  /** Advances fake time in steps until the (possibly async) condition holds; false if it never did within maxMs. */
  until(cond: () => boolean | Promise<boolean>, maxMs?: number, stepMs?: number): Promise<boolean>;
  /** Containers the simulator holds for a pod uid, with status. */
  containers(uid: string): Promise<CriContainerStatus[]>;
  configMap(name: string, data: Record<string, string>, namespace?: string): void;
  secret(name: string, data: Record<string, string>, namespace?: string): void;
  /** Marks the pod deleted (as the API server's graceful delete does). */
  deletePod(name: string, graceSeconds?: number, namespace?: string): void;
  /** Stops the manager only (an agent going down); runtime, API and files stay. */
  stopAgent(): Promise<void>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  sim?: SimulatorOptions;
  /** Reuse these (an agent restart): the runtime, the API and the root dir of an earlier harness. */
  reuse?: { sim: RecordingSimulator; api: FakeApiClient; root: string; clock: FakeClock };
  /** Manager options, or a function of the temp root for options that are paths. */
  manager?: Partial<PodManagerOptions> | ((root: string) => Partial<PodManagerOptions>);
  /** Runs before the manager starts (write manifests, profiles ...). */
  prepare?: (root: string) => Promise<void>;
}

export async function startHarness(o: HarnessOptions = {}): Promise<Harness> {
  const clock = o.reuse?.clock ?? new FakeClock();
  const sim = o.reuse?.sim ?? new RecordingSimulator({ clock, ...o.sim });
  const api = o.reuse?.api ?? new FakeApiClient();
  const log = new MemLog();
  const root = o.reuse?.root ?? (await mkdtemp(path.join(tmpdir(), 'svc-pod-test-')));
  await mkdir(path.join(root, 'cgroup', 'cpu'), { recursive: true });
  await mkdir(path.join(root, 'cgroup', 'memory'), { recursive: true });
  await o.prepare?.(root);
  const mgr = new PodManager({
    client: api,
    runtime: sim,
    clock,
    log,
    nodeName: NODE,
    nodeUid: () => 'node-uid-1',
    hostIPs: () => [HOST_IP],
    nodeCpuMilli: 4000,
    nodeMemoryBytes: 8 * 2 ** 30,
    rootDir: path.join(root, 'root'),
    podLogsDir: path.join(root, 'logs'),
    staticPodPath: '',
    fileCheckFrequencyMs: 1000,
    syncFrequencyMs: 60_000,
    runtimeRequestTimeoutMs: 10_000,
    serializeImagePulls: true,
    seccompDefault: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: '/svc-node',
    cgroupFsRoot: path.join(root, 'cgroup'),
    clusterDNS: [],
    clusterDomain: '',
    imageGC: { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 120_000 },
    housekeepingPeriodMs: 2000,
    ...(typeof o.manager === 'function' ? o.manager(root) : o.manager),
  });
  const ac = new AbortController();
  const running = mgr.run(ac.signal);
  let seq = 0;
  const h: Harness = {
    clock,
    sim,
    api,
    log,
    mgr,
    root,
    createPod(name, spec, meta = {}) {
      const pod: Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default', uid: `pod-uid-${name}-${++seq}`, ...meta },
        spec: { nodeName: NODE, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, ...spec },
      };
      return api.seed(podsResource, pod) as Pod;
    },
    status(name, namespace = 'default') {
      return api.peek<Pod>(podsResource, name, namespace)?.status;
    },
    pod(name, namespace = 'default') {
      return api.peek<Pod>(podsResource, name, namespace);
    },
    async until(cond, maxMs = 30_000, stepMs = 100) {
      for (let waited = 0; waited <= maxMs; waited += stepMs) {
        if (await cond()) return true;
        await clock.advance(stepMs);
        // Let file I/O the agent started finish before time moves on (it runs on the thread pool).
        await new Promise((r) => setTimeout(r, 0));
      }
      return cond();
    },
    async containers(uid) {
      const list = await sim.listContainers({ labelSelector: { 'io.kubernetes.pod.uid': uid } });
      const out: CriContainerStatus[] = [];
      for (const c of list) out.push((await sim.containerStatus(c.id)).status);
      return out.sort((a, b) => a.createdAt - b.createdAt || a.metadata.attempt - b.metadata.attempt);
    },
    configMap(name, data, namespace = 'default') {
      api.seed(configMapsResource, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
    },
    secret(name, data, namespace = 'default') {
      const b64 = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
      api.seed(secretsResource, { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, data: b64 });
    },
    deletePod(name, graceSeconds, namespace = 'default') {
      api.mutate(podsResource, name, namespace, (o) => {
        const p = o as Pod;
        const grace = graceSeconds ?? p.spec.terminationGracePeriodSeconds ?? 30;
        o.metadata.deletionTimestamp = new Date(clock.now() + grace * 1000).toISOString();
        o.metadata.deletionGracePeriodSeconds = grace;
      });
    },
    async stopAgent() {
      ac.abort();
      await flush();
      await running;
    },
    async stop() {
      ac.abort();
      await flush();
      await running;
      sim.close();
      await rm(root, { recursive: true, force: true });
    },
  };
  await flush();
  return h;
}

/** A running-phase predicate with all containers ready. */
export function isRunningReady(s: PodStatus | undefined): boolean {
  return s?.phase === 'Running' && s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

export function waitingReason(s: PodStatus | undefined, container: string): string | undefined {
  return [...(s?.containerStatuses ?? []), ...(s?.initContainerStatuses ?? [])].find((c) => c.name === container)?.state.waiting?.reason;
}

export const BUSYBOX = 'svc.local/busybox:latest';
