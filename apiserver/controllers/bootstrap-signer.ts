import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { isNotFound, isConflict, isAlreadyExists } from '../api/errors';
import type { KObject } from '../api/types';
import { BOOTSTRAP_TOKEN_NAMESPACE, BOOTSTRAP_TOKEN_SECRET_TYPE, hasExpired, secretData } from '../authn/bootstrap-token';
import { CLUSTER_INFO_NAME, CLUSTER_INFO_NAMESPACE, computeDetachedSignature, JWS_KEY_PREFIX, KUBECONFIG_KEY } from '../authn/cluster-info';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
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
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
}

/**
 * The bootstrap signer (5.9, upstream pkg/controller/bootstrap/bootstrapsigner): keeps one
 * jws-kubeconfig-<token id> detached signature in svc-public/cluster-info for every bootstrap
 * token Secret marked usage-bootstrap-signing=true that has not expired, and removes signatures
 * of tokens that are gone, expired or no longer for signing. Runs a pass at start, on every
 * change of cluster-info or of a Secret in svc-system, and periodically: one queue key for
 * cluster-info, so a burst of events makes one pass, from the informers' caches.
 */
export class BootstrapSigner {
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: BootstrapSignerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  /** Signs until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const sleep = this.opts.sleep ?? ((ms: number, s: AbortSignal) => sleepFor(ms, undefined, { signal: s }));
    const secrets = this.informers.informer(this.type('secrets'), { namespace: BOOTSTRAP_TOKEN_NAMESPACE });
    const configMaps = this.informers.informer(this.type('configmaps'), { namespace: CLUSTER_INFO_NAMESPACE });
    const queue = new WorkQueue();
    const poke = () => queue.add(CLUSTER_INFO_NAME);
    for (const inf of [secrets, configMaps]) inf.addEventHandler({ onAdd: poke, onUpdate: poke, onDelete: poke }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, secrets, configMaps))) return;
    const work = runWorkers(
      queue,
      async () => {
        await this.signWith(configMaps.get(`${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_NAME}`), secrets.store.list());
      },
      signal,
      { onError: (_key, err) => this.opts.log.error({ err }, 'bootstrap signer pass failed; retrying') },
    );
    // The periodic pass notices expiries, which no event announces.
    while (!signal.aborted) {
      poke();
      try {
        await sleep(this.opts.intervalMs ?? 60_000, signal);
      } catch {
        break;
      }
    }
    await work;
  }

  /** One pass over the store's current state; returns whether cluster-info was changed. */
  async sign(): Promise<boolean> {
    let cm: KObject;
    try {
      cm = await this.store.get(this.type('configmaps'), CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    return this.signWith(cm, (await this.store.list(this.type('secrets'), BOOTSTRAP_TOKEN_NAMESPACE, everything)).items);
  }

  /** One pass over cluster-info and the Secrets of svc-system as given; returns whether cluster-info was changed. */
  private async signWith(cm: KObject | undefined, secrets: readonly KObject[]): Promise<boolean> {
    if (!cm) return false;
    const cmType = this.type('configmaps');
    const data = (cm.data as Record<string, string> | undefined) ?? {};
    const content = data[KUBECONFIG_KEY];
    if (content === undefined) return false;
    const want: Record<string, string> = {};
    for (const [k, v] of Object.entries(data)) if (!k.startsWith(JWS_KEY_PREFIX)) want[k] = v;
    for (const t of this.signingTokens(secrets)) want[JWS_KEY_PREFIX + t.id] = computeDetachedSignature(content, t.id, t.secret);
    if (sameData(data, want)) return false;
    try {
      await this.store.update(cmType, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME, (cur) => ({ ...cur!, metadata: { ...cur!.metadata, resourceVersion: cm.metadata.resourceVersion }, data: want }), ctx);
    } catch (err) {
      // Changed meanwhile (or deleted): the watch brings another pass.
      if (isConflict(err) || isAlreadyExists(err) || isNotFound(err)) return false;
      throw err;
    }
    this.opts.log.info({ tokens: Object.keys(want).filter((k) => k.startsWith(JWS_KEY_PREFIX)).length }, 'updated cluster-info signatures');
    return true;
  }

  private signingTokens(secrets: readonly KObject[]): Array<{ id: string; secret: string }> {
    const out: Array<{ id: string; secret: string }> = [];
    const now = this.opts.now();
    for (const s of secrets) {
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
