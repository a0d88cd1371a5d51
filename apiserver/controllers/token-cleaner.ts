import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import { BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_TYPE, hasExpired, secretData } from '../authn/bootstrap-token';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';
import { collectionPrefix } from '../store/keys';
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
}

/**
 * The token cleaner (upstream pkg/controller/bootstrap/tokencleaner; spec 3 "Bootstrap token"
 * row): deletes bootstrap token Secrets (svc-system, type bootstrap.svc.io/token) whose expiration
 * has passed — an unparseable expiration counts as passed, as upstream. Deletes carry the UID
 * as a precondition so a Secret recreated under the same name is never removed by mistake.
 */
export class TokenCleaner {
  constructor(
    private readonly store: ObjectStore,
    private readonly cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: TokenCleanerOptions,
  ) {}

  /** Cleans periodically and on Secret events until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const t = this.secretType();
    await this.cache.whenReady();
    const sleep = this.opts.sleep ?? ((ms: number, s: AbortSignal) => sleepFor(ms, undefined, { signal: s }));
    const follow = this.follow(t, signal, sleep);
    while (!signal.aborted) {
      try {
        await this.clean();
      } catch (err) {
        this.opts.log.error({ err }, 'token cleaner pass failed');
      }
      try {
        await sleep(this.opts.intervalMs ?? 60_000, signal);
      } catch {
        break;
      }
    }
    await follow;
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
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return false;
      throw err;
    }
    this.opts.log.info({ secret: `${BOOTSTRAP_TOKEN_NAMESPACE}/${name}` }, 'deleted expired bootstrap token');
    return true;
  }

  private async follow(t: ResourceType, signal: AbortSignal, sleep: (ms: number, s: AbortSignal) => Promise<unknown>): Promise<void> {
    while (!signal.aborted) {
      try {
        for await (const ev of this.cache.watch(collectionPrefix(t, BOOTSTRAP_TOKEN_NAMESPACE), this.cache.currentRevision(), signal)) {
          if (ev.type !== 'DELETED') await this.evaluate(t, ev.object);
        }
      } catch (err) {
        if (signal.aborted) return;
        this.opts.log.warn({ err }, 'secret watch ended; restarting');
        await sleep(1000, signal).catch(() => undefined);
      }
    }
  }

  private secretType(): ResourceType {
    const t = this.types.lookup('', 'v1', 'secrets');
    if (!t) throw new Error('secrets type not registered');
    return t;
  }
}
