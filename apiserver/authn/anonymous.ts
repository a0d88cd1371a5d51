import type { IncomingMessage } from 'node:http';

/** The anonymous section of 5.6 / 5.3: on or off, optionally only for some paths. */
export interface AnonymousPolicy {
  enabled: boolean;
  /** With conditions, only requests whose path is exactly one of these may be anonymous (upstream AnonymousAuthCondition). */
  conditions?: ReadonlyArray<{ path: string }>;
}

/** Whether a request without credentials may proceed as system:anonymous. */
export function anonymousAllowed(policy: AnonymousPolicy, req: IncomingMessage): boolean {
  if (!policy.enabled) return false;
  if (!policy.conditions || policy.conditions.length === 0) return true;
  const path = pathOf(req.url ?? '/');
  return policy.conditions.some((c) => c.path === path);
}

function pathOf(url: string): string {
  const q = url.search(/[?#]/);
  return q >= 0 ? url.slice(0, q) : url;
}
