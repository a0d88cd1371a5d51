/**
 * Pod lifecycle events (upstream's PLEG). Two sources wake the worker of the pod named by an
 * object's io.kubernetes.pod.uid label:
 *   - the runtime's GetContainerEvents stream (upstream's "Evented PLEG"; the simulator and
 *     containerd 1.7+ offer it): each event wakes its pod at once;
 *   - relisting sandboxes and containers and waking pods whose objects appeared, changed state or
 *     disappeared.
 * While the stream is healthy (open without error for one relist period) relisting is only a
 * safety net against lost events and runs every `eventedPeriodMs` (upstream 300 s); when the
 * runtime has no stream (containerd 1.6 answers Unimplemented) or it breaks, relisting goes back
 * to every `periodMs` (upstream 1 s) at once, and a stream that is reopened is followed by a
 * relist, so events missed in between are not lost.
 */
import { isRuntimeError, type RuntimeService } from '../cri';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { MANAGED_BY, MANAGER, POD_UID } from './runtime-labels';

export interface PlegOptions {
  runtime: RuntimeService;
  clock: Clock;
  log: Log;
  /** Relist period without a working event stream (upstream 1 s). */
  periodMs: number;
  /** Relist period while the event stream works (default 300 s, upstream's eventedPlegRelistPeriod). */
  eventedPeriodMs?: number;
  timeoutMs: number;
  /** A pod's containers or sandboxes changed. */
  onChange: (uid: string) => void;
}

export type PlegMode = 'relist' | 'evented';

const DEFAULT_EVENTED_PERIOD_MS = 300_000;

export class Pleg {
  private last = new Map<string, string>();
  private lastRelistAt = 0;
  /** When the current event stream was opened; undefined while there is none. */
  private streamSince: number | undefined;
  /** Set once the runtime said it has no stream: never asked again. */
  private unimplemented = false;
  /** Wakes the relist loop early (the stream broke, or opened again). */
  private wakeRelist: (() => void) | undefined;
  private currentMode: PlegMode = 'relist';

  constructor(private readonly o: PlegOptions) {}

  /** When the last relist succeeded (ms); 0 before the first. */
  get lastSuccess(): number {
    return this.lastRelistAt;
  }

  /** 'evented' while the event stream has been healthy for a relist period, else 'relist'. */
  get mode(): PlegMode {
    const s = this.streamSince;
    return s !== undefined && this.o.clock.now() - s >= this.o.periodMs ? 'evented' : 'relist';
  }

  /** The relist period that applies now. */
  get relistPeriodMs(): number {
    return this.mode === 'evented' ? (this.o.eventedPeriodMs ?? DEFAULT_EVENTED_PERIOD_MS) : this.o.periodMs;
  }

  /** Follows the event stream and relists until the signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const events = this.events(signal);
    while (!signal.aborted) {
      await this.relist(signal);
      const mode = this.mode;
      if (mode !== this.currentMode) {
        this.currentMode = mode;
        this.o.log.info({ mode, relistPeriodMs: this.relistPeriodMs }, mode === 'evented' ? 'following runtime container events; relisting as a safety net only' : 'relisting the runtime every period');
      }
      const ac = new AbortController();
      this.wakeRelist = () => ac.abort();
      // In relist mode, sleep only until the stream would count as healthy, so the switch is prompt.
      const slept = await this.o.clock.sleep(this.relistPeriodMs, AbortSignal.any([signal, ac.signal]));
      this.wakeRelist = undefined;
      if (!slept && signal.aborted) break;
    }
    await events;
  }

  /** One relist: wakes the pods whose runtime objects changed. Resolves the UIDs woken. Never rejects. */
  async relist(signal?: AbortSignal): Promise<string[]> {
    const call = { timeoutMs: this.o.timeoutMs, ...(signal ? { signal } : {}) };
    let next: Map<string, string>;
    try {
      const selector = { [MANAGED_BY]: MANAGER };
      const [sandboxes, containers] = await Promise.all([
        this.o.runtime.listPodSandbox({ labelSelector: selector }, call),
        this.o.runtime.listContainers({ labelSelector: selector }, call),
      ]);
      next = new Map();
      for (const s of sandboxes) next.set(`s/${s.id}`, `${s.labels[POD_UID] ?? ''}/${s.state}`);
      for (const c of containers) next.set(`c/${c.id}`, `${c.labels[POD_UID] ?? ''}/${c.state}`);
    } catch (e) {
      if (!signal?.aborted) this.o.log.debug({ error: (e as Error).message }, 'relisting the runtime failed');
      return [];
    }
    this.lastRelistAt = this.o.clock.now();
    const woken = new Set<string>();
    const uidOf = (v: string) => v.slice(0, v.lastIndexOf('/'));
    for (const [id, v] of next) if (this.last.get(id) !== v) woken.add(uidOf(v));
    for (const [id, v] of this.last) if (!next.has(id)) woken.add(uidOf(v));
    this.last = next;
    woken.delete('');
    for (const uid of woken) this.o.onChange(uid);
    return [...woken];
  }

  private async events(signal: AbortSignal): Promise<void> {
    let delay = 1000;
    while (!signal.aborted && !this.unimplemented) {
      const opened = this.o.clock.now();
      this.streamSince = opened;
      try {
        for await (const ev of this.o.runtime.getContainerEvents({ signal })) {
          delay = 1000;
          const uid = ev.podSandboxStatus?.labels[POD_UID] ?? ev.containersStatuses.find((c) => c.labels[POD_UID])?.labels[POD_UID];
          if (uid) this.o.onChange(uid);
        }
      } catch (e) {
        if (isRuntimeError(e, 'Unimplemented')) {
          this.unimplemented = true;
          this.o.log.info({}, 'the runtime has no container event stream; relisting only');
        } else if (!signal.aborted) {
          this.o.log.debug({ error: (e as Error).message }, 'the runtime container event stream broke');
        }
      }
      const wasHealthy = this.streamSince !== undefined && this.o.clock.now() - opened >= this.o.periodMs;
      this.streamSince = undefined;
      // Back to relisting every period, starting now: events may have been lost.
      this.wakeRelist?.();
      if (signal.aborted || this.unimplemented) return;
      if (wasHealthy) delay = 1000;
      if (!(await this.o.clock.sleep(delay, signal))) return;
      delay = Math.min(delay * 2, 30_000);
    }
  }
}
