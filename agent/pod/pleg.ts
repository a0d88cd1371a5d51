/**
 * Pod lifecycle events (upstream's PLEG): the runtime's containers and sandboxes are relisted
 * every period, and any that appeared, changed state or disappeared wakes the worker of the pod
 * named by its io.kubernetes.pod.uid label. Where the runtime streams container events
 * (GetContainerEvents, containerd 1.7+ and the simulator) they wake workers at once; relisting
 * stays on as the fallback, and runtimes without the stream (containerd 1.6: Unimplemented) rely
 * on it alone.
 */
import { isRuntimeError } from '../cri/errors';
import type { RuntimeService } from '../cri/runtime-service';
import type { Clock } from '../node/clock';
import type { Log } from '../platform/logger';
import { MANAGED_BY, MANAGER, POD_UID } from './runtime-labels';

export interface PlegOptions {
  runtime: RuntimeService;
  clock: Clock;
  log: Log;
  /** Relist period (upstream 1 s). */
  periodMs: number;
  timeoutMs: number;
  /** A pod's containers or sandboxes changed. */
  onChange: (uid: string) => void;
}

export class Pleg {
  private last = new Map<string, string>();
  private lastRelistAt = 0;

  constructor(private readonly o: PlegOptions) {}

  /** When the last relist succeeded (ms); 0 before the first. */
  get lastSuccess(): number {
    return this.lastRelistAt;
  }

  /** Relists every period and follows the event stream until the signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    void this.events(signal);
    while (!signal.aborted) {
      await this.relist(signal);
      if (!(await this.o.clock.sleep(this.o.periodMs, signal))) return;
    }
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
    while (!signal.aborted) {
      try {
        for await (const ev of this.o.runtime.getContainerEvents({ signal })) {
          delay = 1000;
          const uid = ev.podSandboxStatus?.labels[POD_UID] ?? ev.containersStatuses.find((c) => c.labels[POD_UID])?.labels[POD_UID];
          if (uid) this.o.onChange(uid);
        }
      } catch (e) {
        if (isRuntimeError(e, 'Unimplemented')) {
          this.o.log.info({}, 'the runtime has no container event stream; relisting only');
          return;
        }
      }
      if (!(await this.o.clock.sleep(delay, signal))) return;
      delay = Math.min(delay * 2, 30_000);
    }
  }
}
