/**
 * Probe workers, one per running container and probe type, as upstream's prober manager and
 * worker: the first run waits initialDelaySeconds from the container's start, then one run every
 * periodSeconds; a result flips after successThreshold successes or failureThreshold failures.
 * Liveness starts as success, readiness as failure and startup as unknown; liveness and readiness
 * wait until a startup probe has succeeded, and the startup probe stops once it has. Each flip
 * calls onChange with the pod's UID so its worker syncs (restart on liveness/startup failure,
 * Ready on readiness). Every failed run is an Unhealthy event about the container, as upstream's
 * prober records ("Liveness probe failed: HTTP probe failed with statuscode: 500"); the
 * recorder's correlator counts the repeats on one event.
 */
import { NOOP_RECORDER, type EventObjectRef, type EventRecorder } from '../../common/events/recorder';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import type { Container, Pod, Probe } from '../api/core-v1';
import { containerRef, probeTypeName } from './pod-events';
import type { Prober } from './prober';

export type ProbeType = 'liveness' | 'readiness' | 'startup';
export type ProbeResult = 'success' | 'failure' | 'unknown';

export interface RunningContainer {
  id: string;
  container: Container;
  /** When it started (ms). */
  startedAt: number;
}

export interface ProbeManagerOptions {
  prober: Prober;
  clock: Clock;
  log: Log;
  /** Called when a result changes; the pod's worker should sync. */
  onChange: (uid: string) => void;
  /** Where Unhealthy events go; default none. */
  recorder?: EventRecorder;
}

interface Worker {
  uid: string;
  containerId: string;
  type: ProbeType;
  ac: AbortController;
  /** The container, for its events. */
  ref: EventObjectRef;
}

function probeOf(c: Container, type: ProbeType): Probe | undefined {
  return type === 'liveness' ? c.livenessProbe : type === 'readiness' ? c.readinessProbe : c.startupProbe;
}

const initial: Record<ProbeType, ProbeResult> = { liveness: 'success', readiness: 'failure', startup: 'unknown' };

export class ProbeManager {
  private readonly workers = new Map<string, Worker>();
  private readonly results = new Map<string, ProbeResult>();
  private readonly outputs = new Map<string, string>();

  constructor(private readonly o: ProbeManagerOptions) {}

  private key(containerId: string, type: ProbeType): string {
    return `${containerId}/${type}`;
  }

  /** The last probe output (why it failed), or ''. */
  output(containerId: string, type: ProbeType): string {
    return this.outputs.get(this.key(containerId, type)) ?? '';
  }

  /** True once the container's liveness probe has failed failureThreshold times in a row. */
  livenessFailed(containerId: string): boolean {
    return this.results.get(this.key(containerId, 'liveness')) === 'failure';
  }

  /** True once the container's startup probe has failed failureThreshold times in a row. */
  startupFailed(containerId: string): boolean {
    return this.results.get(this.key(containerId, 'startup')) === 'failure';
  }

  /** Started: running and any startup probe has succeeded. */
  started(containerId: string, c: Container): boolean {
    return !c.startupProbe || this.results.get(this.key(containerId, 'startup')) === 'success';
  }

  /** Ready: started and the readiness probe (if any) succeeds. */
  ready(containerId: string, c: Container): boolean {
    if (!this.started(containerId, c)) return false;
    return !c.readinessProbe || this.results.get(this.key(containerId, 'readiness')) === 'success';
  }

  /**
   * Makes the set of workers match the pod's running containers: starts workers for new
   * containers with probes, stops those of containers that are gone. Idempotent; never blocks.
   */
  sync(pod: Pod, running: RunningContainer[], podIPs: readonly string[], signal: AbortSignal): void {
    const uid = pod.metadata.uid ?? '';
    const want = new Set<string>();
    for (const r of running) {
      for (const type of ['startup', 'liveness', 'readiness'] as const) {
        const probe = probeOf(r.container, type);
        if (!probe) continue;
        const k = this.key(r.id, type);
        want.add(k);
        if (this.workers.has(k)) continue;
        const w: Worker = { uid, containerId: r.id, type, ac: new AbortController(), ref: containerRef(pod, r.container.name) };
        this.workers.set(k, w);
        if (!this.results.has(k)) this.results.set(k, initial[type]);
        const stop = AbortSignal.any([signal, w.ac.signal]);
        void this.loop(w, probe, r, podIPs, stop);
      }
    }
    for (const [k, w] of this.workers) {
      if (w.uid === uid && !want.has(k)) this.stop(k, w);
    }
  }

  /** Stops every worker of the pod and forgets its results. */
  removePod(uid: string): void {
    for (const [k, w] of this.workers) if (w.uid === uid) this.stop(k, w);
  }

  private stop(k: string, w: Worker): void {
    w.ac.abort();
    this.workers.delete(k);
    this.results.delete(k);
    this.outputs.delete(k);
  }

  private async loop(w: Worker, probe: Probe, r: RunningContainer, podIPs: readonly string[], signal: AbortSignal): Promise<void> {
    const k = this.key(w.containerId, w.type);
    const periodMs = Math.max(1, probe.periodSeconds ?? 10) * 1000;
    const successThreshold = w.type === 'readiness' ? Math.max(1, probe.successThreshold ?? 1) : 1;
    const failureThreshold = Math.max(1, probe.failureThreshold ?? 3);
    const firstAt = r.startedAt + (probe.initialDelaySeconds ?? 0) * 1000;
    let successes = 0;
    let failures = 0;
    const wait = Math.max(0, firstAt - this.o.clock.now());
    if (wait > 0 && !(await this.o.clock.sleep(wait, signal))) return;
    while (!signal.aborted) {
      const startupPending = w.type !== 'startup' && r.container.startupProbe && this.results.get(this.key(w.containerId, 'startup')) !== 'success';
      const done = w.type === 'startup' && this.results.get(k) === 'success';
      if (!startupPending && !done) {
        const outcome = await this.o.prober.run(probe, { containerId: w.containerId, container: r.container, podIPs }, signal);
        if (signal.aborted) return;
        this.outputs.set(k, outcome.output);
        if (outcome.ok) {
          failures = 0;
          successes++;
        } else {
          successes = 0;
          failures++;
          (this.o.recorder ?? NOOP_RECORDER).event(w.ref, 'Warning', 'Unhealthy', `${probeTypeName(w.type)} probe failed: ${outcome.output}`);
        }
        const cur = this.results.get(k);
        let next = cur;
        if (successes >= successThreshold) next = 'success';
        else if (failures >= failureThreshold) next = 'failure';
        if (next !== cur && next !== undefined) {
          this.results.set(k, next);
          this.o.log.info({ pod: w.uid, container: r.container.name, probe: w.type, result: next, output: outcome.output.slice(0, 200) }, 'probe result changed');
          this.o.onChange(w.uid);
          // Upstream holds a failed liveness/startup worker until the container is replaced.
          if (next === 'failure' && w.type !== 'readiness') return;
        }
      }
      if (!(await this.o.clock.sleep(periodMs, signal))) return;
    }
  }
}
