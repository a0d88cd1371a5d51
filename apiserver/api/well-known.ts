/**
 * Names both daemons agree on, defined once. Upstream spells them under kubernetes.io; svc's
 * spec names its own groups and labels under svc.io (the group domain rule of the spec's opening
 * paragraph).
 */

/** Namespace of the node Leases (upstream kube-node-lease). */
export const NODE_LEASE_NAMESPACE = 'svc-node-lease';

/** The group every node identity carries (upstream system:nodes). */
export const NODES_GROUP = 'system:nodes';

/** The user-name prefix of node identities (upstream system:node:). */
export const NODE_USER_PREFIX = 'system:node:';

/** The annotation that marks a mirror pod (upstream kubernetes.io/config.mirror). */
export const MIRROR_POD_ANNOTATION = 'svc.io/config.mirror';

/**
 * Whether a pod is a mirror pod: it carries the annotation, whatever its value (upstream tests the
 * key's presence). Every check of mirror pods (defaulting, ServiceAccount, NodeRestriction, the
 * token handler) asks this one function, so that none can be told apart by an empty value.
 */
export function isMirrorPod(pod: { metadata?: { annotations?: Record<string, string> } }): boolean {
  const annotations = pod.metadata?.annotations;
  return annotations !== undefined && annotations !== null && Object.hasOwn(annotations, MIRROR_POD_ANNOTATION);
}

/** The node's host name label (upstream kubernetes.io/hostname). */
export const HOSTNAME_LABEL = 'svc.io/hostname';

/**
 * Labels under svc.io a node may set on itself: the kubelet's well-known labels (upstream
 * kubelet's kubeletLabels, enforced by the kubelet and by the NodeRestriction admission plugin).
 */
export const KUBELET_LABELS: ReadonlySet<string> = new Set([
  HOSTNAME_LABEL,
  'svc.io/arch',
  'svc.io/os',
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
 * svc-node.svc.io is the agent's own name for the first).
 */
export const KUBELET_LABEL_NAMESPACES: readonly string[] = ['kubelet.svc.io', 'svc-node.svc.io', 'node.svc.io'];

/** Labels under this namespace steer workloads for the control plane; nodes may never set them. */
export const NODE_RESTRICTION_LABEL_NAMESPACE = 'node-restriction.svc.io';

/**
 * Taint keys the node lifecycle controller owns (upstream node.kubernetes.io/unreachable,
 * not-ready, unschedulable): DefaultTolerationSeconds admission tolerates the first two and the
 * scheduler's unschedulable filter honours tolerations of the third.
 */
export const TAINT_UNREACHABLE = 'node.svc.io/unreachable';
export const TAINT_NOT_READY = 'node.svc.io/not-ready';
export const TAINT_UNSCHEDULABLE = 'node.svc.io/unschedulable';
