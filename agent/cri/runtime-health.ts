/**
 * Runtime readiness for the node's Ready condition, as the kubelet's updateRuntimeUp loop and
 * runtimeState do: Status is asked every intervalMs; RuntimeReady and NetworkReady conditions
 * that are false (or missing) make the node NotReady with upstream's messages, and so does a
 * runtime that has not answered for downAfterMs ("container runtime is down"). It also keeps the
 * runtime's name and version for nodeInfo.containerRuntimeVersion.
 *
 * It declares no interface of node/ (node/ sits above cri/): node/'s ReadinessCheck and
 * RuntimeStatusProvider are defined at their consumer, and this class satisfies them by shape
 * (name + check(), runtimeVersion()); main.ts hands it to both.
 */
import { realClock, type Clock } from '../platform/clock';
import type { RuntimeService } from './runtime-service';
import type { RuntimeCondition, VersionInfo } from './types';

export interface RuntimeHealthOptions {
  clock?: Clock;
  /** Time between Status calls (default 5 s, the kubelet's). */
  intervalMs?: number;
  /** Deadline of each Status call (default 10 s). */
  timeoutMs?: number;
  /** Without a successful Status for this long the runtime counts as down (default 30 s, the kubelet's maxWaitForContainerRuntime). */
  downAfterMs?: number;
}

export interface RuntimeHealthSnapshot {
  /** When Status last succeeded (ms); 0 if never. */
  lastSuccessAt: number;
  /** Message of the last failed Status call, cleared by a success. */
  lastError?: string;
  runtimeReady: boolean;
  networkReady: boolean;
  /** Upstream-style reasons the node is not ready because of the runtime; empty when ready. */
  problems: string[];
  version?: VersionInfo;
}

function describe(type: string, c: RuntimeCondition | undefined): string {
  return c ? `${c.type}=${c.status} reason:${c.reason} message:${c.message}` : `${type} condition missing`;
}

export class RuntimeHealth {
  readonly name = 'container runtime';
  private readonly clock: Clock;
  private lastSuccessAt = 0;
  private lastError: string | undefined;
  private runtime?: RuntimeCondition;
  private network?: RuntimeCondition;
  private version: VersionInfo | undefined;
  private readonly listeners = new Set<(s: RuntimeHealthSnapshot) => void>();
  private lastProblems: string | undefined;

  constructor(
    private readonly svc: RuntimeService,
    private readonly opts: RuntimeHealthOptions = {},
  ) {
    this.clock = opts.clock ?? realClock;
  }

  /** Probes now and then every intervalMs until signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.probe(signal);
      if (!(await this.clock.sleep(this.opts.intervalMs ?? 5000, signal))) return;
    }
  }

  /** One Status call (and Version when not yet known or after a failure); returns the new snapshot. Never rejects. */
  async probe(signal?: AbortSignal): Promise<RuntimeHealthSnapshot> {
    const call = { timeoutMs: this.opts.timeoutMs ?? 10_000, ...(signal ? { signal } : {}) };
    try {
      const status = await this.svc.status(false, call);
      this.runtime = status.conditions.find((c) => c.type === 'RuntimeReady');
      this.network = status.conditions.find((c) => c.type === 'NetworkReady');
      if (this.version === undefined || this.lastError !== undefined) this.version = await this.svc.version(call);
      this.lastSuccessAt = this.clock.now();
      this.lastError = undefined;
    } catch (e) {
      this.lastError = (e as Error).message;
    }
    const snap = this.snapshot();
    const key = snap.problems.join('\n');
    if (key !== this.lastProblems) {
      this.lastProblems = key;
      for (const l of this.listeners) l(snap);
    }
    return snap;
  }

  /** The current view, computed from the last probe and the clock. */
  snapshot(): RuntimeHealthSnapshot {
    const problems: string[] = [];
    const runtimeReady = this.runtime?.status === true;
    const networkReady = this.network?.status === true;
    if (this.lastSuccessAt === 0) {
      problems.push('container runtime status check may not have completed yet');
    } else if (this.clock.now() - this.lastSuccessAt >= (this.opts.downAfterMs ?? 30_000)) {
      problems.push('container runtime is down');
    }
    if (this.lastSuccessAt !== 0) {
      if (!runtimeReady) problems.push(`container runtime not ready: ${describe('RuntimeReady', this.runtime)}`);
      if (!networkReady) problems.push(`container runtime network not ready: ${describe('NetworkReady', this.network)}`);
    }
    const snap: RuntimeHealthSnapshot = { lastSuccessAt: this.lastSuccessAt, runtimeReady, networkReady, problems };
    if (this.lastError !== undefined) snap.lastError = this.lastError;
    if (this.version) snap.version = { ...this.version };
    return snap;
  }

  /** Calls listener whenever the set of problems changes; returns the unsubscribe function. */
  onChange(listener: (s: RuntimeHealthSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** node/'s ReadinessCheck: undefined when ready, else the problems joined by "; ". Cheap: reads the last probe. */
  async check(): Promise<string | undefined> {
    const p = this.snapshot().problems;
    return Promise.resolve(p.length === 0 ? undefined : p.join('; '));
  }

  /** node/'s RuntimeStatusProvider: "<name>://<version>" once Version answered, else "unknown://". */
  runtimeVersion(): Promise<string> {
    return Promise.resolve(this.version ? `${this.version.runtimeName}://${this.version.runtimeVersion}` : 'unknown://');
  }
}
