import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { isNotFound, isConflict, isAlreadyExists } from '../api/errors';
import type { KObject } from '../api/types';
import { BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_TYPE, hasExpired, secretData } from '../authn/bootstrap-token';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';

const ctx = controllerContext('token-cleaner');
const everything = { labelSelector: [], fieldSelector: [] };

export interface TokenCleanerOptions {
  now: () => Date;
  log: Logger;
  /** Time between full passes (default 60 s); Secret events are handled as they come. */
  intervalMs?: number;
  /** Waits between passes; rejects or resolves early when the signal aborts. Default timers/promises setTimeout. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
}

/**
 * The token cleaner (upstream pkg/controller/bootstrap/tokencleaner; spec 3 "Bootstrap token"
 * row): deletes bootstrap token Secrets (svc-system, type bootstrap.svc.io/token) whose expiration
 * has passed — an unparseable expiration counts as passed, as upstream. Deletes carry the UID
 * as a precondition so a Secret recreated under the same name is never removed by mistake.
 */
export class TokenCleaner {
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: TokenCleanerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  /**
   * Cleans on Secret events and periodically until the signal aborts: each added or changed Secret
   * of svc-system is queued, and every one again each interval (expiry needs no event), then
   * judged as the informer has it.
   */
  async run(signal: AbortSignal): Promise<void> {
    const t = this.secretType();
    const sleep = this.opts.sleep ?? ((ms: number, s: AbortSignal) => sleepFor(ms, undefined, { signal: s }));
    const secrets = this.informers.informer(t, { namespace: BOOTSTRAP_TOKEN_NAMESPACE });
    const queue = new WorkQueue();
    const enqueue = (s: KObject) => queue.add(s.metadata.name!);
    secrets.addEventHandler({ onAdd: enqueue, onUpdate: (_old, s) => enqueue(s) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, secrets))) return;
    const work = runWorkers(
      queue,
      async (name) => {
        const s = secrets.get(`${BOOTSTRAP_TOKEN_NAMESPACE}/${name}`);
        if (s) await this.evaluate(t, s);
      },
      signal,
      { onError: (name, err) => this.opts.log.warn({ err, secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}` }, 'deleting an expired bootstrap token failed; retrying') },
    );
    while (!signal.aborted) {
      for (const s of secrets.store.list()) enqueue(s);
      try {
        await sleep(this.opts.intervalMs ?? 60_000, signal);
      } catch {
        break;
      }
    }
    await work;
  }

  /** One pass: deletes every expired bootstrap token Secret; returns the names deleted. */
  async clean(): Promise<string[]> {
    const t = this.secretType();
    const deleted: string[] = [];
    for (const s of (await this.store.list(t, BOOTSTRAP_TOKEN_NAMESPACE, everything)).items) {
      if (await this.evaluate(t, s)) deleted.push(s.metadata.name!);
    }
    return deleted;
  }

  private async evaluate(t: ResourceType, s: KObject): Promise<boolean> {
    if (s.type !== BOOTSTRAP_TOKEN_SECRET_TYPE || s.metadata.deletionTimestamp) return false;
    if (!hasExpired(secretData(s), this.opts.now())) return false;
    const name = s.metadata.name!;
    try {
      await this.store.delete(t, BOOTSTRAP_TOKEN_NAMESPACE, name, { preconditions: { uid: s.metadata.uid } }, ctx);
    } catch (err) {
      if (isNotFound(err) || isConflict(err) || isAlreadyExists(err)) return false;
      throw err;
    }
    this.opts.log.info({ secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}` }, 'deleted expired bootstrap token');
    return true;
  }

  private secretType(): ResourceType {
    const t = this.types.lookup('', 'v1', 'secrets');
    if (!t) throw new Error('secrets type not registered');
    return t;
  }
}
