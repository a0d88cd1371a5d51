/**
 * Content negotiation of aggregated discovery (issue 17, item 4): a client that lists
 * `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList` (kubectl and client-go
 * 1.30+), its v2beta1 (kubectl 1.27 to 1.29) or the svc.io twin (g=apidiscovery.svc.io) in Accept
 * before a plain JSON type gets the aggregated document on /api and /apis; any other client gets
 * the legacy documents, as upstream's servers answer. The Content-Type of the answer names what
 * was served: client-go reads it to tell the two apart.
 */

/** The discovery API groups a client may ask for: upstream's, and svc's own name for it. */
const DISCOVERY_GROUPS: ReadonlySet<string> = new Set(['apidiscovery.k8s.io', 'apidiscovery.svc.io']);
const DISCOVERY_VERSIONS: ReadonlySet<string> = new Set(['v2', 'v2beta1']);
export const AGGREGATED_KIND = 'APIGroupDiscoveryList';

/** The aggregated document to serve: its group and version, apiVersion and Content-Type. */
export interface AggregatedRendering {
  group: string;
  version: string;
  apiVersion: string;
  contentType: string;
}

function parseAccept(header: string): Array<{ type: string; params: Record<string, string>; q: number }> {
  return header
    .split(',')
    .map((part, i) => {
      const [type, ...ps] = part.trim().split(';');
      const params: Record<string, string> = {};
      for (const p of ps) {
        const eq = p.indexOf('=');
        if (eq < 0) continue;
        params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
      }
      const q = params.q !== undefined ? Number(params.q) : 1;
      return { type: type.trim().toLowerCase(), params, q: Number.isFinite(q) ? q : 0, i };
    })
    .filter((m) => m.type !== '' && m.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
}

/**
 * The aggregated document the Accept header asks for, or undefined for the legacy ones: the
 * first acceptable range in the client's order (by q, then position) decides. An aggregated range
 * in JSON of a known group and version is served; plain JSON (or a wildcard) means legacy; other
 * ranges (protobuf, other kinds or versions) are passed over, and a header that names nothing
 * served gets the legacy documents as before.
 */
export function aggregatedDiscovery(accept: string | undefined): AggregatedRendering | undefined {
  if (!accept) return undefined;
  for (const m of parseAccept(accept)) {
    const json = m.type === 'application/json' || m.type === 'application/*' || m.type === '*/*';
    if (!json) continue;
    if (m.params.as === undefined && m.params.g === undefined) return undefined;
    const group = m.params.g ?? '';
    const version = m.params.v ?? '';
    if (m.params.as === AGGREGATED_KIND && DISCOVERY_GROUPS.has(group) && DISCOVERY_VERSIONS.has(version)) {
      return { group, version, apiVersion: `${group}/${version}`, contentType: `application/json;g=${group};v=${version};as=${AGGREGATED_KIND}` };
    }
  }
  return undefined;
}
