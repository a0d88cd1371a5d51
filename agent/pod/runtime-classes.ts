/**
 * A pod's runtimeClassName to the CRI handler its sandbox runs with (RunPodSandboxRequest
 * runtime_handler), as upstream's kubelet runtimeclass.Manager: the RuntimeClass is read from the
 * API server (node.svc.io/v1, which system:node may read) and its handler used. Upstream follows
 * RuntimeClasses with an informer; here a get is cached for a short while per name (a handler is
 * immutable, so only a class deleted and created again under the same name can be seen late).
 */
import { TtlCache } from '../../common/ttl-cache';
import type { ApiClient } from '../client/api-client';
import { ClientError } from '../client/client-error';
import type { ResourceRef } from '../client/resources';
import type { Clock } from '../platform/clock';

export const runtimeClassesResource: ResourceRef = { group: 'node.svc.io', version: 'v1', resource: 'runtimeclasses', kind: 'RuntimeClass', namespaced: false };

/** How long a looked-up handler is used without asking again. */
export const RUNTIME_CLASS_TTL_MS = 30_000;

/** The RuntimeClass cannot be resolved: the pod's sandbox is not created (FailedCreatePodSandBox), and the sync retries. */
export class RuntimeClassError extends Error {}

export interface RuntimeHandlerLookup {
  /** The CRI handler for the class ('' for none: the runtime's default); rejects with RuntimeClassError when it cannot be resolved. */
  handler(runtimeClassName: string | undefined, signal?: AbortSignal): Promise<string>;
}

export class ApiRuntimeClasses implements RuntimeHandlerLookup {
  private readonly cache: TtlCache<string>;

  constructor(
    private readonly client: ApiClient,
    clock: Clock,
    private readonly timeoutMs = 10_000,
  ) {
    this.cache = new TtlCache<string>(() => clock.now(), 256);
  }

  async handler(runtimeClassName: string | undefined, signal?: AbortSignal): Promise<string> {
    if (!runtimeClassName) return '';
    const cached = this.cache.get(runtimeClassName);
    if (cached !== undefined) return cached;
    let rc: { handler?: string };
    try {
      rc = await this.client.get<{ handler?: string; metadata: { name?: string } }>(runtimeClassesResource, runtimeClassName, { timeoutMs: this.timeoutMs, ...(signal ? { signal } : {}) });
    } catch (e) {
      // Upstream's messages: the lister's NotFound, or "failed to lookup RuntimeClass".
      if (e instanceof ClientError && e.status === 404) throw new RuntimeClassError(`runtimeclass.node.k8s.io "${runtimeClassName}" not found`);
      throw new RuntimeClassError(`failed to lookup RuntimeClass ${runtimeClassName}: ${(e as Error).message}`);
    }
    const handler = rc.handler ?? '';
    this.cache.set(runtimeClassName, handler, RUNTIME_CLASS_TTL_MS);
    return handler;
  }
}
