/**
 * The two spellings of every svc.io name (issue 17, item 3). The spec names svc's own API groups
 * under svc.io (the group domain rule of its opening paragraph); stock clients (kubectl, client-go,
 * the official client libraries, upstream manifests) name the same groups under k8s.io and the
 * same labels, annotations and taint keys under kubernetes.io. svc keeps one canonical spelling,
 * svc.io, in storage, in its own code and in authorization decisions, and treats the upstream
 * spelling as another name of the same thing wherever a client may send it.
 *
 * - Groups: `X.svc.io` ↔ `X.k8s.io` (rbac.authorization, coordination, events, certificates,
 *   authentication, authorization, networking, storage, ...). Groups upstream names without a
 *   domain (the core group, apps, batch, policy, autoscaling) have one name only.
 * - Keys of labels, annotations and taints: `svc.io/x` ↔ `kubernetes.io/x`, `a.svc.io/x` ↔
 *   `a.kubernetes.io/x` (and upstream's rarer k8s.io spelling, `k8s.io/x`, reads as svc.io too).
 */

const SVC = 'svc.io';
const K8S = 'k8s.io';
const KUBERNETES = 'kubernetes.io';

/** The canonical (svc.io) name of a group: `X.k8s.io` becomes `X.svc.io`; any other name is returned as it is. */
export function canonicalGroup(group: string): string {
  return group.endsWith(`.${K8S}`) ? `${group.slice(0, -K8S.length)}${SVC}` : group;
}

/** Upstream's (k8s.io) name of a canonical group, or undefined for a group that has only one name. */
export function upstreamGroup(group: string): string | undefined {
  return group.endsWith(`.${SVC}`) ? `${group.slice(0, -SVC.length)}${K8S}` : undefined;
}

/** True when two group names name the same group (equal, or one the other's upstream spelling). */
export function sameGroup(a: string, b: string): boolean {
  return a === b || canonicalGroup(a) === canonicalGroup(b);
}

/** `group/version` with the group canonical; `v1` (the core group) and non-strings pass unchanged. */
export function canonicalApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return apiVersion;
  return `${canonicalGroup(apiVersion.slice(0, slash))}${apiVersion.slice(slash)}`;
}

/** True when two apiVersions name the same group and version in either spelling. */
export function sameApiVersion(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'string' && typeof b === 'string' && canonicalApiVersion(a) === canonicalApiVersion(b));
}

/** The canonical (svc.io) spelling of a label, annotation or taint key; keys outside kubernetes.io and k8s.io are returned as they are. */
export function canonicalKey(key: string): string {
  const slash = key.indexOf('/');
  if (slash < 0) return key;
  const prefix = key.slice(0, slash);
  for (const domain of [KUBERNETES, K8S]) {
    if (prefix === domain) return `${SVC}${key.slice(slash)}`;
    if (prefix.endsWith(`.${domain}`)) return `${prefix.slice(0, -domain.length)}${SVC}${key.slice(slash)}`;
  }
  return key;
}

/** The upstream (kubernetes.io) spelling of an svc.io key, or undefined for a key outside svc.io. */
export function upstreamKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  if (slash < 0) return undefined;
  const prefix = key.slice(0, slash);
  if (prefix === SVC) return `${KUBERNETES}${key.slice(slash)}`;
  if (prefix.endsWith(`.${SVC}`)) return `${prefix.slice(0, -SVC.length)}${KUBERNETES}${key.slice(slash)}`;
  return undefined;
}

/** True when two label, annotation or taint keys are the same key in either spelling. */
export function sameKey(a: string, b: string): boolean {
  return a === b || canonicalKey(a) === canonicalKey(b);
}

/** The key and its other spelling, canonical first (one element for keys outside svc.io and kubernetes.io). */
export function bothKeys(key: string): string[] {
  const canonical = canonicalKey(key);
  const upstream = upstreamKey(canonical);
  return upstream ? [canonical, upstream] : [canonical];
}
