/**
 * Removes the directories of deleted local-path volumes on this node: the volumes labelled with
 * the node's name (local-path.svc.io/node, the one list and watch the Node authorizer lets a node
 * make of volumes) are followed through an informer; one that is terminating and still holds the
 * cleanup finalizer has its directory removed under localPathDir, then the finalizer taken off
 * (the only change NodeRestriction lets a node make to a volume), so the API server removes it.
 * A volume whose directory lies outside localPathDir was never made here: nothing is removed
 * from disk, and the finalizer is taken off all the same.
 * A failure is retried with back-off and reported as a Warning event on the volume
 * (VolumeFailedDelete, upstream's reason).
 */
import { LOCAL_PATH_NODE_LABEL } from '../../apiserver/api/local-path';
import type { KObject } from '../../apiserver/api/types';
import type { EventRecorder } from '../../common/events/recorder';
import { Informer } from '../../common/informer/informer';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import type { ApiClient } from '../client/api-client';
import { ClientError } from '../client/client-error';
import { apiListWatch, timersFromSleep } from '../client/list-watch';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { isLocalPathVolume, LocalPathError, removeLocalPathDir, withoutCleanupFinalizer } from './local-path';
import { volumesResource } from './volume-pvc';

export interface LocalPathCleanerOptions {
  client: ApiClient;
  nodeName: string;
  /** localPathDir of the configuration. */
  baseDir: string;
  clock: Clock;
  log: Log;
  recorder?: EventRecorder;
  /** Removes a volume's directory (default removeLocalPathDir); a seam for tests. */
  remove?: (baseDir: string, dir: string) => Promise<void>;
}

const hostPathOf = (pv: KObject): string => {
  const spec = pv.spec as { hostPath?: { path?: unknown }; local?: { path?: unknown } } | undefined;
  const p = spec?.hostPath?.path ?? spec?.local?.path;
  return typeof p === 'string' ? p : '';
};

export class LocalPathCleaner {
  private readonly informer: Informer<KObject>;
  private readonly queue: WorkQueue;

  constructor(private readonly o: LocalPathCleanerOptions) {
    const lw = apiListWatch<KObject>(o.client, volumesResource, { labelSelector: `${LOCAL_PATH_NODE_LABEL}=${o.nodeName}` });
    const clock = timersFromSleep(o.clock);
    this.informer = new Informer<KObject>(lw, { name: 'local-path-volume', clock, log: o.log, resumeAfterCleanEnd: true });
    this.queue = new WorkQueue({ clock });
    const consider = (pv: KObject) => {
      if (pv.metadata.deletionTimestamp && withoutCleanupFinalizer(pv)) this.queue.add(pv.metadata.name ?? '');
    };
    this.informer.addEventHandler({ onAdd: consider, onUpdate: (_old, pv) => consider(pv) });
  }

  /** Follows the volumes and cleans up until the signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([
      this.informer.run(signal),
      runWorkers(this.queue, (name) => this.cleanUp(name), signal, {
        onError: (name, err) => {
          this.o.log.warn({ err, volume: name }, 'removing a local-path volume directory failed; retrying');
          const pv = this.informer.get(name);
          if (pv) this.o.recorder?.event({ kind: 'PersistentVolume', apiVersion: 'v1', name, uid: pv.metadata.uid }, 'Warning', 'VolumeFailedDelete', (err as Error).message);
        },
      }),
    ]);
  }

  /** Removes the directory of the deleted volume, then its finalizer. */
  async cleanUp(name: string): Promise<void> {
    const pv = this.informer.get(name);
    if (!pv?.metadata.deletionTimestamp || !isLocalPathVolume(pv) || pv.metadata.labels?.[LOCAL_PATH_NODE_LABEL] !== this.o.nodeName) return;
    const dir = hostPathOf(pv);
    try {
      if (dir) await (this.o.remove ?? removeLocalPathDir)(this.o.baseDir, dir);
      this.o.log.info({ volume: name, dir }, 'removed local-path volume directory');
    } catch (e) {
      // Outside localPathDir: the agent never made it, so there is nothing of ours to remove.
      if (!(e instanceof LocalPathError)) throw e;
      this.o.log.warn({ volume: name, dir, error: e.message }, 'local-path volume outside localPathDir: nothing removed');
    }
    await this.dropFinalizer(pv);
  }

  private async dropFinalizer(seen: KObject): Promise<void> {
    let pv = seen;
    for (let attempt = 0; attempt < 5; attempt++) {
      const next = withoutCleanupFinalizer(pv);
      if (!next) return;
      try {
        await this.o.client.update(volumesResource, next);
        return;
      } catch (e) {
        if (!(e instanceof ClientError)) throw e;
        if (e.status === 404) return;
        if (e.status !== 409) throw e;
        const fresh = await this.o.client.get(volumesResource, seen.metadata.name ?? '').catch((err: unknown) => {
          if (err instanceof ClientError && err.status === 404) return undefined;
          throw err;
        });
        if (!fresh || fresh.metadata.uid !== seen.metadata.uid) return;
        pv = fresh;
      }
    }
    throw new Error(`volume ${seen.metadata.name} kept changing while its finalizer was being removed`);
  }
}
