import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import { BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_TYPE, hasExpired, secretData } from '../authn/bootstrap-token';
import { CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE, computeDetachedSignature, JWS_KEY_PREFIX, KUBECONFIG_KEY } from '../authn/cluster-info';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { collectionPrefix } from '../store/keys';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { controllerContext } from '../store/system-context';

const ctx = controllerContext('bootstrap-signer');
const everything = { labelSelector: [], fieldSelector: [] };
const ID = /^[a-z0-9]{6}$/;
const SECRET = /^[a-z0-9]{16}$/;

export interface BootstrapSignerOptions {
  now: () => Date;
  log: Logger;
  /** Time between full passes (default 60 s; expiry is noticed by these). Events trigger passes too. */
  intervalMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
}

/**
 * The bootstrap signer (5.9, upstream pkg/controller/bootstrap/bootstrapsigner): keeps one
 * jws-kubeconfig-<token id> detached signature in svc-public/cluster-info for every bootstrap
 * token Secret marked usage-bootstrap-signing=true that has not expired, and removes signatures
 * of tokens that are gone, expired or no longer for signing. Runs a pass at start, on every
 * change of cluster-info or of a Secret in svc-system, and periodically.
 */
export class BootstrapSigner {
  constructor(
    private readonly store: ObjectStore,
    private readonly cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: BootstrapSignerOptions,
  ) {}

  /** Signs until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await this.cache.whenReady();
    const sleep = this.opts.sleep ?? ((ms: number, s: AbortSignal) => sleepFor(ms, undefined, { signal: s }));
    let dirty = true;
    let wake: (() => void) | undefined;
    const poke = () => {
      dirty = true;
      wake?.();
    };
    const follows = [
      this.follow(collectionPrefix(this.type('secrets'), BOOTSTRAP_TOKEN_NAMESPACE), signal, poke, sleep),
      this.follow(collectionPrefix(this.type('configmaps'), CLUSTER_INFO_NAMESPACE), signal, poke, sleep),
    ];
    const interval = this.opts.intervalMs ?? 60_000;
    let last = 0;
    while (!signal.aborted) {
      if (dirty || Date.now() - last >= interval) {
        dirty = false;
        last = Date.now();
        try {
          await this.sign();
        } catch (err) {
          this.opts.log.error({ err }, 'bootstrap signer pass failed; retrying');
          dirty = true;
          await sleep(1000, signal).catch(() => undefined);
        }
      }
      if (!dirty) {
        // Sleep until the next periodic pass, cut short by an event or by shutdown.
        const nap = new AbortController();
        const stop = () => nap.abort();
        signal.addEventListener('abort', stop, { once: true });
        wake = stop;
        await sleep(interval, nap.signal).catch(() => undefined);
        wake = undefined;
        signal.removeEventListener('abort', stop);
      }
      if (dirty) await sleep(50, signal).catch(() => undefined); // coalesce bursts of events
    }
    await Promise.all(follows);
  }

  /** One pass; returns whether cluster-info was changed. */
  async sign(): Promise<boolean> {
    const cmType = this.type('configmaps');
    let cm: KObject;
    try {
      cm = await this.store.get(cmType, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return false;
      throw err;
    }
    const data = (cm.data as Record<string, string> | undefined) ?? {};
    const content = data[KUBECONFIG_KEY];
    if (content === undefined) return false;
    const want: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) if (!k.startsWith(JWS_KEY_PREFIX)) want[k] = v;
    for (const t of await this.signingTokens()) want[JWS_KEY_PREFIX + t.id] = computeDetachedSignature(content, t.id, t.secret);
    if (sameData(data, want)) return false;
    try {
      await this.store.update(cmType, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, resourceVersion: cm.metadata.resourceVersion }, data: want }), ctx);
    } catch (err) {
      // Changed meanwhile (or deleted): the watch brings another pass.
      if (err instanceof ApiError && (err.code === 409 || err.code === 404)) return false;
      throw err;
    }
    this.opts.log.info({ tokens: Object.keys(want).filter((k) => k.startsWith(JWS_KEY_PREFIX)).length }, 'updated cluster-info signatures');
    return true;
  }

  private async signingTokens(): Promise<Array<{ id: string; secret: string }>> {
    const out: Array<{ id: string; secret: string }> = [];
    const now = this.opts.now();
    for (const s of (await this.store.list(this.type('secrets'), BOOTSTRAP_TOKEN_NAMESPACE, everything)).items) {
      if (s.type !== BOOTSTRAP_TOKEN_SECRET_TYPE || s.metadata.deletionTimestamp) continue;
      const d = secretData(s);
      const id = d['token-id'] ?? '';
      const secret = d['token-secret'] ?? '';
      if (!ID.test(id) || !SECRET.test(secret)) continue;
      if (s.metadata.name !== `bootstrap-token-${id}`) continue;
      if (d['usage-bootstrap-signing'] !== 'true' || hasExpired(d, now)) continue;
      out.push({ id, secret });
    }
    return out;
  }

  private async follow(prefix: string, signal: AbortSignal, poke: () => void, sleep: (ms: number, s: AbortSignal) => Promise<unknown>): Promise<void> {
    while (!signal.aborted) {
      try {
        for await (const ev of this.cache.watch(prefix, this.cache.currentRevision(), signal)) {
          void ev;
          poke();
        }
      } catch (err) {
        if (signal.aborted) return;
        this.opts.log.warn({ err }, 'bootstrap signer watch ended; restarting');
        await sleep(1000, signal).catch(() => undefined);
      }
    }
  }

  private type(resource: string): ResourceType {
    const t = this.types.lookup('', 'v1', resource);
    if (!t) throw new Error(`${resource} type not registered`);
    return t;
  }
}

function sameData(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}
