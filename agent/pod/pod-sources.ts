/**
 * The merged view of the pod sources (upstream: the kubelet's PodConfig merging its "api" and
 * "file" sources): the API pods bound to this node, the static pods of staticPodPath, and the
 * mirror pods that stand for the static pods in the API, kept in step with them. It owns the three
 * sets and both sources; the pod manager hears what changed through `PodSourceEvents` and decides
 * what runs (workers, admission).
 */
import type { ApiClient } from '../client/api-client';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { ApiPodSource } from './api-pod-source';
import { MirrorPods } from './mirror-pods';
import type { PodSourceHandler, SourceName } from './pod-source';
import { podKey, type Pod } from '../api/core-v1';
import { isMirrorPod, isStaticPod, StaticPodSource, CONFIG_HASH } from './static-pod-source';
import type { ApiPodRef } from './status-manager';
import { MIRROR_POD_ANNOTATION } from '../../apiserver/api/well-known';

/**
 * What the merged sources tell the pod manager. Called synchronously, in the order the changes
 * arrived; must not throw.
 */
export interface PodSourceEvents {
  /** A pod left its source (`fromApi`: an API pod, else a static pod): its worker winds it down. */
  gone(uid: string, fromApi: boolean): void;
  /** A static pod is in the manifest directory (new, or again after a scan). */
  staticPod(pod: Pod): void;
  /** An API pod (not a mirror pod) was added or changed. */
  apiPod(pod: Pod): void;
}

export interface PodSourcesOptions {
  client: ApiClient;
  nodeName: string;
  /** The Node's UID once registered (owner of mirror pods). */
  nodeUid: () => string | undefined;
  clock: Clock;
  log: Log;
  /** '' disables static pods. */
  staticPodPath: string;
  fileCheckFrequencyMs: number;
  /** Mirror reconcile period (default 10 s). */
  mirrorPeriodMs?: number;
  events: PodSourceEvents;
}

type SourceOp = 'snapshot' | 'upsert' | 'remove';

function runningRank(p: Pod): number {
  return p.status?.phase === 'Running' ? 0 : 1;
}

export class PodSources implements PodSourceHandler {
  private readonly apiPods = new Map<string, Pod>();
  private readonly mirrors = new Map<string, Pod>();
  private readonly staticPods = new Map<string, Pod>();
  private readonly apiSource: ApiPodSource;
  private readonly staticSource: StaticPodSource | undefined;
  private readonly mirrorPods: MirrorPods;
  private mirrorKick: (() => void) | undefined;
  /** Changes held back until `open()` (the pod manager is not ready to run pods yet). */
  private pending: { source: SourceName; op: SourceOp; pods: Pod[] }[] | undefined = [];

  constructor(private readonly o: PodSourcesOptions) {
    const log = o.log;
    this.apiSource = new ApiPodSource({ client: o.client, nodeName: o.nodeName, clock: o.clock, log, handler: this });
    if (o.staticPodPath) {
      this.staticSource = new StaticPodSource({ dir: o.staticPodPath, nodeName: o.nodeName, periodMs: o.fileCheckFrequencyMs, clock: o.clock, log, handler: this });
    }
    this.mirrorPods = new MirrorPods({ client: o.client, nodeName: o.nodeName, nodeUid: o.nodeUid, log });
  }

  /** True once every source delivered its first full set. */
  get synced(): boolean {
    return this.apiSource.synced && (this.staticSource?.synced ?? true);
  }

  /** UIDs of every pod a source holds (API pods, then static pods). */
  knownUids(): string[] {
    return [...this.apiPods.keys(), ...this.staticPods.keys()];
  }

  /**
   * Delivers the changes held back so far, in order, and every later one at once. Called when the
   * pod manager can run pods (the runtime answered).
   */
  open(): void {
    const held = this.pending ?? [];
    this.pending = undefined;
    for (const p of held) this.apply(p.source, p.op, p.pods);
  }

  /** Runs both sources and the mirror pod loop until the signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.allSettled([this.apiSource.run(signal), this.staticSource?.run(signal), this.mirrorLoop(signal)]);
  }

  /** Reconciles the mirror pods soon (a static pod's worker finished). */
  kickMirrors(): void {
    this.mirrorKick?.();
  }

  // ------------------------------------------------------------------ PodSourceHandler

  snapshot(source: SourceName, pods: Pod[]): void {
    this.enqueue(source, 'snapshot', pods);
  }

  upsert(source: SourceName, pod: Pod): void {
    this.enqueue(source, 'upsert', [pod]);
  }

  remove(source: SourceName, pod: Pod): void {
    this.enqueue(source, 'remove', [pod]);
  }

  private enqueue(source: SourceName, op: SourceOp, pods: Pod[]): void {
    if (this.pending) {
      this.pending.push({ source, op, pods });
      return;
    }
    this.apply(source, op, pods);
  }

  private apply(source: SourceName, op: SourceOp, pods: Pod[]): void {
    if (source === 'file') {
      // The static source only ever sends full sets.
      const next = new Map(pods.map((p) => [p.metadata.uid ?? '', p]));
      for (const [uid] of this.staticPods) if (!next.has(uid)) this.o.events.gone(uid, false);
      this.staticPods.clear();
      for (const [uid, p] of next) {
        this.staticPods.set(uid, p);
        this.o.events.staticPod(p);
      }
      this.mirrorKick?.();
      return;
    }
    if (op === 'snapshot') {
      const uids = new Set(pods.filter((p) => !isMirrorPod(p)).map((p) => p.metadata.uid ?? ''));
      for (const uid of [...this.apiPods.keys()]) {
        if (!uids.has(uid)) {
          this.apiPods.delete(uid);
          this.o.events.gone(uid, true);
        }
      }
      this.mirrors.clear();
      // Admission in upstream's order: pods that already run here first (an agent restart must
      // not reject them for pods that came later), then by creation time.
      pods = [...pods].sort((a, b) => runningRank(a) - runningRank(b) || (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
    }
    for (const pod of pods) {
      if (isMirrorPod(pod)) {
        if (op === 'remove') this.mirrors.delete(podKey(pod));
        else this.mirrors.set(podKey(pod), pod);
        this.mirrorKick?.();
        continue;
      }
      const uid = pod.metadata.uid ?? '';
      if (op === 'remove') {
        this.apiPods.delete(uid);
        this.o.events.gone(uid, true);
        continue;
      }
      this.apiPods.set(uid, pod);
      this.o.events.apiPod(pod);
    }
  }

  /** Where a pod's status goes: the pod itself, or for a static pod its current mirror pod. */
  apiPodRef(pod: Pod): ApiPodRef | undefined {
    const ref = { namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '' };
    if (!isStaticPod(pod)) return { ...ref, uid: pod.metadata.uid ?? '' };
    const m = this.mirrors.get(podKey(pod));
    const hash = pod.metadata.annotations?.[CONFIG_HASH] ?? pod.metadata.uid;
    if (!m || m.metadata.deletionTimestamp || m.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== hash || !m.metadata.uid) return undefined;
    return { ...ref, uid: m.metadata.uid };
  }

  private async mirrorLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      // Only once the API list arrived do we know which mirrors exist.
      if (this.apiSource.synced) {
        try {
          await this.mirrorPods.reconcile([...this.staticPods.values()], [...this.mirrors.values()], signal);
        } catch (e) {
          if (signal.aborted) return;
          this.o.log.warn({ error: (e as Error).message }, 'cannot reconcile mirror pods yet');
        }
      }
      const ac = new AbortController();
      this.mirrorKick = () => ac.abort();
      await this.o.clock.sleep(this.o.mirrorPeriodMs ?? 10_000, AbortSignal.any([signal, ac.signal]));
      this.mirrorKick = undefined;
    }
  }
}
