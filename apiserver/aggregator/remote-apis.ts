/**
 * The group versions served by other API servers (APIServices with a service, issue 22 item 2),
 * as the aggregator's proxy and discovery need them: kept from an informer on APIServices by the
 * availability controller, with each one's availability and the discovery document it last
 * answered. Local APIServices (no service) are not here: those group versions are served by
 * this server.
 */
import type { KObject } from '../api/types';
import { rec, str } from '../registry/obj-access';

export interface RemoteApi {
  /** The APIService's name, `<version>.<group>`. */
  name: string;
  group: string;
  version: string;
  service: { namespace: string; name: string; port: number };
  /** PEM CA bundle that verifies the server's certificate; absent: the system's roots. */
  caPem?: string;
  insecureSkipTLSVerify: boolean;
  groupPriorityMinimum: number;
  versionPriority: number;
}

export interface RemoteState {
  available: boolean;
  /** The APIResourceList the server answered for /apis/<group>/<version> (what discovery merges). */
  resources?: Record<string, unknown>;
  /** The server's OpenAPI documents as last fetched (what /openapi/v2 and /openapi/v3 merge). */
  openapi?: RemoteOpenApi;
}

/** An aggregated server's OpenAPI documents, cached (remote-openapi.ts). */
export interface RemoteOpenApi {
  /** Its /openapi/v2 (Swagger 2.0), when it serves one. */
  v2?: Record<string, unknown>;
  /** Its /openapi/v3/apis/<group>/<version>, when it serves one. */
  v3?: Record<string, unknown>;
  /** When they were fetched (ms since the epoch). */
  fetchedAt: number;
}

/** The remote APIService an object describes, or undefined for a local one. */
export function remoteApiOf(o: KObject): RemoteApi | undefined {
  const spec = rec(o.spec) ?? {};
  const svc = rec(spec.service);
  if (!svc) return undefined;
  const ca = str(spec.caBundle);
  return {
    name: o.metadata.name ?? '',
    group: str(spec.group) ?? '',
    version: str(spec.version) ?? '',
    service: { namespace: str(svc.namespace) ?? '', name: str(svc.name) ?? '', port: typeof svc.port === 'number' ? svc.port : 443 },
    caPem: ca ? Buffer.from(ca, 'base64').toString('utf8') : undefined,
    insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
    groupPriorityMinimum: typeof spec.groupPriorityMinimum === 'number' ? spec.groupPriorityMinimum : 0,
    versionPriority: typeof spec.versionPriority === 'number' ? spec.versionPriority : 0,
  };
}

export class RemoteApis {
  private readonly apis = new Map<string, { api: RemoteApi; state: RemoteState }>();

  /** Follows an APIService (added or changed): remote ones are kept, local ones dropped. */
  upsert(o: KObject): void {
    const api = remoteApiOf(o);
    const name = o.metadata.name ?? '';
    if (!api) {
      this.apis.delete(name);
      return;
    }
    const old = this.apis.get(name);
    this.apis.set(name, { api, state: old && sameTarget(old.api, api) ? old.state : { available: false } });
  }

  remove(name: string): void {
    this.apis.delete(name);
  }

  setState(name: string, state: RemoteState): void {
    const e = this.apis.get(name);
    if (e) e.state = state;
  }

  /** The remote API serving group/version, if any. */
  lookup(group: string, version: string): { api: RemoteApi; state: RemoteState } | undefined {
    return this.apis.get(`${version}.${group}`);
  }

  /** The remote API a request path is for (/apis/<group>/<version>[/...]), if any. */
  lookupPath(path: string): { api: RemoteApi; state: RemoteState } | undefined {
    if (this.apis.size === 0) return undefined;
    const m = /^\/apis\/([^/]+)\/([^/]+)(?:\/|$)/.exec(path);
    return m ? this.lookup(m[1], m[2]) : undefined;
  }

  /** The APIGroup document of a group served only remotely (/apis/<group>), versions by priority. */
  group(name: string): Record<string, unknown> | undefined {
    const versions = this.all()
      .filter((e) => e.api.group === name)
      .sort((a, b) => b.api.versionPriority - a.api.versionPriority)
      .map((e) => ({ groupVersion: `${name}/${e.api.version}`, version: e.api.version }));
    if (!versions.length) return undefined;
    return { kind: 'APIGroup', apiVersion: 'v1', name, versions, preferredVersion: versions[0] };
  }

  /** Every remote API, by the discovery order of APIServices: group priority (highest first), then name. */
  all(): Array<{ api: RemoteApi; state: RemoteState }> {
    return [...this.apis.values()].sort((a, b) => b.api.groupPriorityMinimum - a.api.groupPriorityMinimum || (a.api.name < b.api.name ? -1 : 1));
  }
}

function sameTarget(a: RemoteApi, b: RemoteApi): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
