/**
 * The OpenAPI documents of aggregated servers (upstream's aggregator downloads each available
 * APIService's spec and merges it into the documents it serves): fetched with the availability
 * check, cached in the APIService's RemoteState, refreshed when the server's discovery changes or
 * the cache is a minute old (upstream's v2 aggregation refreshes every minute), dropped when the
 * APIService's target changes or it becomes unavailable; each document at most 8 MiB, each fetch
 * at most 10 s. The merge keeps what this server serves: a remote definition or path never
 * replaces a local one.
 */
import { createHash } from 'node:crypto';
import type { RemoteGet, RemoteTarget } from './discovery-check';
import type { RemoteApi, RemoteApis, RemoteOpenApi } from './remote-apis';

type Json = Record<string, unknown>;

export const OPENAPI_REFRESH_MS = 60_000;
export const MAX_OPENAPI_BYTES = 8 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether the cached documents should be fetched again. */
export function openApiDue(cached: RemoteOpenApi | undefined, now: number, discoveryChanged: boolean): boolean {
  return !cached || discoveryChanged || now - cached.fetchedAt >= OPENAPI_REFRESH_MS;
}

/** Fetches an aggregated server's /openapi/v2 and its group version's /openapi/v3 document; a document it does not serve (or that fails) is absent. */
export function openApiFetcher(get: RemoteGet, now: () => number) {
  return async (api: RemoteApi, target: RemoteTarget): Promise<RemoteOpenApi> => {
    const one = async (path: string): Promise<Json | undefined> => {
      try {
        const r = await get(api, target, path, MAX_OPENAPI_BYTES, FETCH_TIMEOUT_MS);
        return r.status >= 200 && r.status < 300 && isObj(r.body) ? r.body : undefined;
      } catch {
        return undefined;
      }
    };
    const [v2, v3] = await Promise.all([one('/openapi/v2'), one(`/openapi/v3/apis/${api.group}/${api.version}`)]);
    return { ...(v2 ? { v2 } : {}), ...(v3 ? { v3 } : {}), fetchedAt: now() };
  };
}

/** True when an OpenAPI path belongs to the APIService's group version (what its server is trusted to describe). */
function ownPath(path: string, api: RemoteApi): boolean {
  const base = `/apis/${api.group}/${api.version}`;
  return path === base || path.startsWith(base + '/');
}

/** Adds the available aggregated servers' paths (of their own group version) and definitions to a /openapi/v2 document (in place; returns it). */
export function mergeOpenApiV2(doc: Json, remote: RemoteApis | undefined): Json {
  if (!remote) return doc;
  const paths = (isObj(doc.paths) ? doc.paths : (doc.paths = {}));
  const definitions = (isObj(doc.definitions) ? doc.definitions : (doc.definitions = {}));
  for (const { api, state } of remote.all()) {
    const spec = state.available ? state.openapi?.v2 : undefined;
    if (!spec) continue;
    if (isObj(spec.paths)) for (const [p, v] of Object.entries(spec.paths)) if (ownPath(p, api) && !(p in paths)) paths[p] = v;
    if (isObj(spec.definitions)) for (const [name, v] of Object.entries(spec.definitions)) if (!(name in definitions)) definitions[name] = v;
  }
  return doc;
}

/** The cached /openapi/v3 document of an available aggregated server for key (`apis/<group>/<version>`). */
export function remoteOpenApiV3(remote: RemoteApis | undefined, key: string): Json | undefined {
  const m = /^apis\/([^/]+)\/([^/]+)$/.exec(key);
  const e = m ? remote?.lookup(m[1], m[2]) : undefined;
  return e?.state.available ? e.state.openapi?.v3 : undefined;
}

/** Adds the aggregated servers' group versions to a /openapi/v3 index (in place; returns it), each with its document's hash as upstream. */
export function mergeOpenApiV3Index(index: Json, remote: RemoteApis | undefined): Json {
  if (!remote) return index;
  const paths = (isObj(index.paths) ? index.paths : (index.paths = {}));
  for (const { api, state } of remote.all()) {
    const key = `apis/${api.group}/${api.version}`;
    const v3 = state.available ? state.openapi?.v3 : undefined;
    if (!v3 || key in paths) continue;
    const hash = createHash('sha512').update(JSON.stringify(v3)).digest('hex').slice(0, 32).toUpperCase();
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return index;
}
