/**
 * containerRuntimeEndpoint / imageServiceEndpoint values. Like the kubelet, we accept
 * `unix:///path` and (deprecated upstream, still common) a bare absolute path; `sim://[name]`
 * selects the in-process simulator (`sim://name?handlers=runc,kata` names the runtime handlers
 * it accepts). tcp:// and npipe:// are not supported on this agent.
 */

export type Endpoint = { kind: 'unix'; path: string; target: string } | { kind: 'sim'; name: string; handlers?: string[] };

/** Parses an endpoint; throws Error with a message naming the value when it is not usable. */
export function parseEndpoint(value: string): Endpoint {
  const v = value.trim();
  if (v.startsWith('sim://')) {
    const [name, query] = v.slice('sim://'.length).split('?', 2);
    const handlers = query === undefined ? undefined : new URLSearchParams(query).get('handlers');
    return { kind: 'sim', name: name || 'default', ...(handlers != null ? { handlers: handlers.split(',').filter((h) => h !== '') } : {}) };
  }
  let p: string | undefined;
  if (v.startsWith('unix://')) p = v.slice('unix://'.length);
  else if (v.startsWith('/')) p = v;
  if (p === undefined || !p.startsWith('/') || p.length < 2) {
    throw new Error(`container runtime endpoint ${JSON.stringify(value)}: want unix:///absolute/path.sock or sim://`);
  }
  // grpc-js accepts unix:///abs/path (and unix:/abs/path); normalise to the triple-slash form.
  return { kind: 'unix', path: p, target: `unix://${p}` };
}

/** The endpoint as shown in messages (unix:///path or sim://name). */
export function endpointText(e: Endpoint): string {
  return e.kind === 'unix' ? e.target : `sim://${e.name}`;
}
