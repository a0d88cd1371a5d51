/**
 * Names both daemons agree on, defined once. Upstream spells them under kubernetes.io; svc's
 * spec names its own groups and labels under svc.io (the group domain rule of the spec's opening
 * paragraph). Stock clients and manifests use upstream's spelling, so each key here is accepted in
 * both (issue 17; group-names.ts maps one to the other): the agent sets both label families,
 * NodeRestriction allows both, and tolerations match taints in either spelling.
 */
import { bothKeys, canonicalKey, sameKey } from './group-names';

/** Namespace of the node Leases (upstream kube-node-lease). */
export const NODE_LEASE_NAMESPACE = 'svc-node-lease';

/** The group every node identity carries (upstream system:nodes). */
export const NODES_GROUP = 'system:nodes';

/** The user-name prefix of node identities (upstream system:node:). */
export const NODE_USER_PREFIX = 'system:node:';

/** The annotation that marks a mirror pod (upstream kubernetes.io/config.mirror). */
export const MIRROR_POD_ANNOTATION = 'svc.io/config.mirror';
const MIRROR_POD_ANNOTATIONS = bothKeys(MIRROR_POD_ANNOTATION);

/**
 * Whether a pod is a mirror pod: it carries the annotation in either spelling, whatever its value
 * (upstream tests the key's presence). Every check of mirror pods (defaulting, ServiceAccount,
 * NodeRestriction, the token handler) asks this one function, so that none can be told apart by
 * an empty value or by the other spelling.
 */
export function isMirrorPod(pod: { metadata?: { annotations?: Record<string, string> } }): boolean {
  const annotations = pod.metadata?.annotations;
  return annotations !== undefined && annotations !== null && MIRROR_POD_ANNOTATIONS.some((k) => Object.hasOwn(annotations, k));
}

/** The node's host name label (upstream kubernetes.io/hostname). */
export const HOSTNAME_LABEL = 'svc.io/hostname';
/** The node's operating system and architecture labels (upstream kubernetes.io/os, kubernetes.io/arch). */
export const OS_LABEL = 'svc.io/os';
export const ARCH_LABEL = 'svc.io/arch';

/**
 * Labels under svc.io a node may set on itself: the kubelet's well-known labels (upstream
 * kubelet's kubeletLabels, enforced by the kubelet and by the NodeRestriction admission plugin).
 * Their kubernetes.io spellings are allowed alike (isKubeletLabel).
 */
export const KUBELET_LABELS: ReadonlySet<string> = new Set([
  HOSTNAME_LABEL,
  ARCH_LABEL,
  OS_LABEL,
  'beta.svc.io/arch',
  'beta.svc.io/os',
  'beta.svc.io/instance-type',
  'node.svc.io/instance-type',
  'failure-domain.beta.svc.io/region',
  'failure-domain.beta.svc.io/zone',
  'topology.svc.io/region',
  'topology.svc.io/zone',
]);

/**
 * Label namespaces a node owns (upstream kubelet.kubernetes.io and node.kubernetes.io;
 * svc-node.svc.io is the agent's own name for the first). Their kubernetes.io spellings are
 * allowed alike (isKubeletLabel).
 */
export const KUBELET_LABEL_NAMESPACES: readonly string[] = ['kubelet.svc.io', 'svc-node.svc.io', 'node.svc.io'];

/** Labels under this namespace steer workloads for the control plane; nodes may never set them. */
export const NODE_RESTRICTION_LABEL_NAMESPACE = 'node-restriction.svc.io';

const within = (ns: string, domain: string) => ns === domain || ns.endsWith(`.${domain}`);

/** The namespace (prefix) of a key in its svc.io spelling: '' for a key without one. */
function canonicalNamespace(key: string): string {
  const canonical = canonicalKey(key);
  const slash = canonical.indexOf('/');
  return slash >= 0 ? canonical.slice(0, slash) : '';
}

/**
 * Upstream IsKubeletLabel, in either spelling: one of KUBELET_LABELS or under one of
 * KUBELET_LABEL_NAMESPACES (kubernetes.io/hostname and node.kubernetes.io/x as svc.io/hostname
 * and node.svc.io/x).
 */
export function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(canonicalKey(key))) return true;
  const ns = canonicalNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((d) => within(ns, d));
}

/**
 * Whether a label lies in the platform's reserved domains: svc.io, and upstream's kubernetes.io
 * and k8s.io (upstream isKubernetesLabel). A node may set such labels only when isKubeletLabel.
 */
export function isReservedLabel(key: string): boolean {
  return within(canonicalNamespace(key), 'svc.io');
}

/** Whether a label is under node-restriction.svc.io or upstream's node-restriction.kubernetes.io. */
export function isNodeRestrictionLabel(key: string): boolean {
  return within(canonicalNamespace(key), NODE_RESTRICTION_LABEL_NAMESPACE);
}

/**
 * The well-known labels a node agent puts on its Node, in both spellings: svc.io/hostname and
 * kubernetes.io/hostname, svc.io/os and kubernetes.io/os, svc.io/arch and kubernetes.io/arch
 * (manifests select nodes with `nodeSelector: {kubernetes.io/os: linux}`).
 */
export function wellKnownNodeLabels(hostname: string, os: string, arch: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of [
    [ARCH_LABEL, arch],
    [HOSTNAME_LABEL, hostname],
    [OS_LABEL, os],
  ] as const) {
    for (const k of bothKeys(key)) out[k] = value;
  }
  return out;
}

/**
 * Taint keys the node lifecycle controller owns (upstream node.kubernetes.io/unreachable,
 * not-ready, unschedulable): DefaultTolerationSeconds admission tolerates the first two and the
 * scheduler's unschedulable filter honours tolerations of the third.
 */
export const TAINT_UNREACHABLE = 'node.svc.io/unreachable';
export const TAINT_NOT_READY = 'node.svc.io/not-ready';
export const TAINT_UNSCHEDULABLE = 'node.svc.io/unschedulable';
/** The NoSchedule taints of node conditions (upstream TaintNodesByCondition: node.kubernetes.io/memory-pressure, ...). */
export const TAINT_MEMORY_PRESSURE = 'node.svc.io/memory-pressure';
export const TAINT_DISK_PRESSURE = 'node.svc.io/disk-pressure';
export const TAINT_PID_PRESSURE = 'node.svc.io/pid-pressure';
export const TAINT_NETWORK_UNAVAILABLE = 'node.svc.io/network-unavailable';

/**
 * Whether a toleration's key names a taint's key: equal, or the same key in the other spelling
 * (node.kubernetes.io/not-ready is node.svc.io/not-ready). The controllers set the svc.io keys;
 * tolerations written for upstream (node.kubernetes.io/...) tolerate them, and the reverse.
 */
export function sameTaintKey(a: string, b: string): boolean {
  return sameKey(a, b);
}
