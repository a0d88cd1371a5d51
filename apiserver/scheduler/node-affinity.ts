import type { KObject } from '../api/types';
import { get, rec, recs, str, strs, type JsonMap } from '../registry/obj-access';

/** Upstream NodeAffinity filter reason (ErrReasonPod). */
export const NODE_AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector";

const INTEGER = /^[+-]?\d+$/;

/**
 * One nodeSelectorRequirement against a lookup (labels or fields), as upstream's labels.Selector:
 * In needs the key with a listed value; NotIn holds when the key is absent or its value unlisted;
 * Exists and DoesNotExist look at the key only; Gt and Lt take exactly one integer value and need
 * the key with an integer value above (below) it. Malformed requirements return undefined.
 */
export function requirementMatches(req: JsonMap, lookup: (key: string) => string | undefined): boolean | undefined {
  const key = str(req.key);
  const op = str(req.operator);
  const values = strs(req.values);
  if (!key) return undefined;
  const v = lookup(key);
  switch (op) {
    case 'In':
      if (values.length === 0) return undefined;
      return v !== undefined && values.includes(v);
    case 'NotIn':
      if (values.length === 0) return undefined;
      return v === undefined || !values.includes(v);
    case 'Exists':
      if (values.length > 0) return undefined;
      return v !== undefined;
    case 'DoesNotExist':
      if (values.length > 0) return undefined;
      return v === undefined;
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1 || !INTEGER.test(values[0])) return undefined;
      if (v === undefined || !INTEGER.test(v)) return false;
      const have = BigInt(v);
      const bound = BigInt(values[0]);
      return op === 'Gt' ? have > bound : have < bound;
    }
    default:
      return undefined;
  }
}

/**
 * One nodeSelectorTerm: every matchExpression (labels) and matchField (only metadata.name, as
 * upstream) must hold. An empty term matches nothing, and so does a term with a malformed
 * requirement (upstream ignores terms that fail to parse).
 */
export function termMatches(term: JsonMap, node: KObject): boolean {
  const exprs = recs(term.matchExpressions);
  const fields = recs(term.matchFields);
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  for (const e of exprs) {
    if (requirementMatches(e, (k) => (Object.hasOwn(labels, k) ? labels[k] : undefined)) !== true) return false;
  }
  for (const f of fields) {
    const op = str(f.operator);
    if (str(f.key) !== 'metadata.name' || (op !== 'In' && op !== 'NotIn') || strs(f.values).length !== 1) return false;
    if (requirementMatches(f, () => node.metadata.name ?? '') !== true) return false;
  }
  return true;
}

/** The pod's required node affinity terms, or undefined when it has none (every node qualifies). */
export function requiredTerms(pod: KObject): JsonMap[] | undefined {
  const required = rec(get(pod, 'spec', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution'));
  if (!required) return undefined;
  return recs(required.nodeSelectorTerms);
}

/**
 * Upstream NodeAffinity Filter (RequiredNodeAffinity.Match): every spec.nodeSelector label equal
 * on the node, and at least one required nodeSelectorTerm matching (terms are ORed).
 */
export function matchesNodeAffinity(pod: KObject, node: KObject): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(rec(get(pod, 'spec', 'nodeSelector')) ?? {})) {
    if (!Object.hasOwn(labels, k) || labels[k] !== v) return false;
  }
  const terms = requiredTerms(pod);
  if (terms === undefined) return true;
  return terms.some((t) => termMatches(t, node));
}
