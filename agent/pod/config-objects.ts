/**
 * ConfigMaps and Secrets the pod machinery reads (env valueFrom/envFrom, configMap and secret
 * volumes), fetched from the API server for each use as upstream's Get-based configmap manager
 * does. A missing object is `undefined`, not an error; callers decide whether `optional` allows it.
 */
import type { ApiClient } from '../client/api-client';
import { ClientError } from '../client/client-error';
import { secretsResource, type ResourceRef } from '../client/resources';
import type { ConfigMap, Secret } from '../api/core-v1';

export const podsResource: ResourceRef = { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true };
export const configMapsResource: ResourceRef = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };

export interface ConfigObjectGetter {
  /** The ConfigMap, or undefined when it does not exist. Rejects on other failures (server unreachable ...). */
  configMap(namespace: string, name: string, signal?: AbortSignal): Promise<ConfigMap | undefined>;
  /** The Secret, or undefined when it does not exist. Rejects on other failures. */
  secret(namespace: string, name: string, signal?: AbortSignal): Promise<Secret | undefined>;
}

export class ApiConfigObjects implements ConfigObjectGetter {
  constructor(
    private readonly client: ApiClient,
    private readonly timeoutMs = 10_000,
  ) {}

  configMap(namespace: string, name: string, signal?: AbortSignal): Promise<ConfigMap | undefined> {
    return this.get<ConfigMap>(configMapsResource, namespace, name, signal);
  }

  secret(namespace: string, name: string, signal?: AbortSignal): Promise<Secret | undefined> {
    return this.get<Secret>(secretsResource, namespace, name, signal);
  }

  private async get<T extends ConfigMap | Secret>(r: ResourceRef, namespace: string, name: string, signal?: AbortSignal): Promise<T | undefined> {
    try {
      return await this.client.get<T>(r, name, { namespace, timeoutMs: this.timeoutMs, ...(signal ? { signal } : {}) });
    } catch (e) {
      if (e instanceof ClientError && e.status === 404) return undefined;
      throw e;
    }
  }
}

/** A Secret's values decoded (data is base64; stringData, if a writer left it, is plain). */
export function secretValues(s: Secret): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(s.data ?? {})) out[k] = Buffer.from(v, 'base64');
  for (const [k, v] of Object.entries(s.stringData ?? {})) out[k] = Buffer.from(v, 'utf8');
  return out;
}

/** A ConfigMap's values (binaryData is base64). */
export function configMapValues(c: ConfigMap): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(c.data ?? {})) out[k] = Buffer.from(v, 'utf8');
  for (const [k, v] of Object.entries(c.binaryData ?? {})) out[k] = Buffer.from(v, 'base64');
  return out;
}
