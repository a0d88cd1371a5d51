/**
 * The agent's streaming paths, as upstream's kubelet registers them:
 * /exec|attach|run/{namespace}/{pod}/{container} and /exec|attach|run/{namespace}/{pod}/{uid}/{container};
 * /portForward/{namespace}/{pod} and /portForward/{namespace}/{pod}/{uid}.
 */

export const STREAM_VERBS = ['exec', 'attach', 'run', 'portForward'] as const;
export type StreamVerb = (typeof STREAM_VERBS)[number];

export interface StreamTarget {
  verb: StreamVerb;
  namespace: string;
  pod: string;
  /** The pod's UID when the path names it (a request for another instance of the name is 404). */
  uid?: string;
  /** Absent for portForward. */
  container?: string;
}

/** Splits a streaming path; undefined when it is not one (the caller answers 404). */
export function parseStreamPath(pathname: string): StreamTarget | undefined {
  const parts = pathname.split('/').slice(1);
  const verb = STREAM_VERBS.find((v) => v === parts[0]);
  if (!verb) return undefined;
  let rest: string[];
  try {
    rest = parts.slice(1).map((p) => decodeURIComponent(p));
  } catch {
    return undefined;
  }
  if (rest.some((p) => p === '')) return undefined;
  if (verb === 'portForward') {
    if (rest.length === 2) return { verb, namespace: rest[0], pod: rest[1] };
    if (rest.length === 3) return { verb, namespace: rest[0], pod: rest[1], uid: rest[2] };
    return undefined;
  }
  if (rest.length === 3) return { verb, namespace: rest[0], pod: rest[1], container: rest[2] };
  if (rest.length === 4) return { verb, namespace: rest[0], pod: rest[1], uid: rest[2], container: rest[3] };
  return undefined;
}
