import { isDeepStrictEqual } from 'node:util';
import type { KObject } from '../api/types';
import { rec } from '../registry/obj-access';

/**
 * What a node may change through a status sub-resource: the `writable` paths (dotted from the
 * object's root; a path covers everything below it) minus the `refused` ones. Everything else must
 * stay as stored, and NodeRestriction answers 403 naming the first field that differs.
 */
export interface NodeStatusWriteRule {
  writable: readonly string[];
  refused: readonly string[];
  /** Said in the refusal, so the node's operator sees what is allowed. */
  summary: string;
}

/**
 * The rule of every status sub-resource a node writes, in one table (A.7 NodeRestriction).
 *
 * - pods/status: only the status, and not status.resourceClaimStatuses. Upstream's admitPodStatus
 *   refuses label changes ("cannot update labels through pod status") and resource claim statuses;
 *   we refuse every other metadata change as well (annotations too: a node could otherwise move
 *   its pods under another controller's or tool's annotations). The agent writes only status.
 * - nodes/status: the status, the labels and the annotations. Upstream's kubelet reconciles its
 *   labels and annotations through nodes/status (PatchNodeStatus), and admitNode applies to every
 *   sub-resource: the labels are further limited to the kubelet's own (forbiddenLabelChanges),
 *   and taints and pod CIDRs (spec) never change.
 * - persistentvolumeclaims/status: only status.capacity, status.conditions,
 *   status.allocatedResources and status.allocatedResourceStatuses, as upstream's admitPVCStatus
 *   (with RecoverVolumeExpansionFailure on).
 *
 * The store already keeps spec, finalizers and owner references on a status write; the table is
 * the whole rule anyway, so that it does not depend on what the store restores.
 */
export const NODE_STATUS_WRITES = {
  'pods/status': { writable: ['status'], refused: ['status.resourceClaimStatuses'], summary: 'status, except status.resourceClaimStatuses' },
  'nodes/status': {
    writable: ['status', 'metadata.labels', 'metadata.annotations'],
    refused: [],
    summary: "status, metadata.annotations, and metadata.labels within the kubelet's label set",
  },
  'persistentvolumeclaims/status': {
    writable: ['status.capacity', 'status.conditions', 'status.allocatedResources', 'status.allocatedResourceStatuses'],
    refused: [],
    summary: 'status.capacity, status.conditions, status.allocatedResources and status.allocatedResourceStatuses',
  },
} as const satisfies Record<string, NodeStatusWriteRule>;

export type NodeStatusSubresource = keyof typeof NODE_STATUS_WRITES;

/**
 * Fields the store sets whatever the request carried (managedFields from the write, before
 * admission; generation from the stored object and resourceVersion from storage, after it), so
 * a difference in them is no change and is never compared.
 */
export const STORE_SET_FIELDS: readonly string[] = ['metadata.managedFields', 'metadata.generation', 'metadata.resourceVersion'];

/** The first field (dotted path, in key order) that differs between obj and old outside what the rule allows; undefined when none. */
export function forbiddenStatusChange(rule: NodeStatusWriteRule, obj: KObject, old: KObject): string | undefined {
  const named = [...rule.writable, ...rule.refused, ...STORE_SET_FIELDS];
  const walk = (path: string, a: unknown, b: unknown, inWritable: boolean): string | undefined => {
    if (STORE_SET_FIELDS.includes(path)) return undefined;
    if (rule.refused.includes(path)) return isDeepStrictEqual(a, b) ? undefined : path;
    const writable = inWritable || rule.writable.includes(path);
    const prefix = path === '' ? '' : `${path}.`;
    const ruledBelow = named.some((p) => p.startsWith(prefix));
    if (!ruledBelow) return writable || isDeepStrictEqual(a, b) ? undefined : path;
    // A rule names something deeper: compare key by key (a side that is not an object has no keys).
    const x = rec(a) ?? {};
    const y = rec(b) ?? {};
    for (const k of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()) {
      const found = walk(prefix + k, x[k], y[k], writable);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return walk('', obj, old, false);
}
