import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { ensureRec, get, rec, recs, str, type JsonMap } from '../registry/obj-access';
import { compareQuantities, formatQuantity, type Quantity } from '../registry/quantity';
import { podResources } from '../registry/quota/pod-usage';
import { parseResourceList, type ResourceList } from '../registry/quota/resource-list';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';
import { forbiddenSubject } from './resource-quota';

/** Reads the namespace's LimitRanges now. */
export type LimitRangeLister = (namespace: string) => Promise<KObject[]>;

/** Where LimitRanger says what it defaulted (upstream's kubernetes.io/limit-ranger, under svc.io as the project's own annotations). */
export const LIMIT_RANGER_ANNOTATION = 'svc.io/limit-ranger';

/**
 * LimitRanger (upstream's admission plugin of that name): a new pod's containers (and init
 * containers) get the default requests and limits of the namespace's LimitRanges of type
 * Container where they set none (and the pod is annotated with what was set); then each
 * container is held to the Container items' min, max and maxLimitRequestRatio, the pod's sums
 * to the Pod items', and a claim's storage request (on create and resize) to the
 * PersistentVolumeClaim items' min and max. Refusals are one 403 listing every violation, with
 * upstream's messages. Pod updates are not judged (containers cannot change), as upstream.
 */
export class LimitRanger implements AdmissionPlugin {
  readonly name = 'LimitRanger';

  constructor(private readonly limitRanges: LimitRangeLister) {}

  private handles(a: AdmissionAttributes): 'pod' | 'claim' | undefined {
    if (a.subresource || a.type.group !== '' || !a.object) return undefined;
    if (a.type.resource === 'pods' && a.operation === 'CREATE') return 'pod';
    if (a.type.resource === 'persistentvolumeclaims' && (a.operation === 'CREATE' || a.operation === 'UPDATE')) return 'claim';
    return undefined;
  }

  async mutate(a: AdmissionAttributes): Promise<void> {
    if (this.handles(a) !== 'pod') return;
    for (const lr of await this.limitRanges(a.namespace)) applyDefaults(a.object!, lr);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const kind = this.handles(a);
    if (!kind) return;
    const problems: string[] = [];
    for (const lr of await this.limitRanges(a.namespace)) {
      for (const item of recs(rec(lr.spec)?.limits)) problems.push(...(kind === 'pod' ? podViolations(item, a.object!) : claimViolations(item, a.object!)));
    }
    const unique = [...new Set(problems)];
    if (unique.length === 0) return;
    // Upstream's aggregate error: one message as it is, several in brackets.
    throw errors.forbidden(`${forbiddenSubject(a)} is forbidden: ${unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`}`);
  }
}

/** Upstream mergePodResourceRequirements with the Container items' default and defaultRequest. */
function applyDefaults(pod: KObject, lr: KObject): void {
  const limits: JsonMap = {};
  const requests: JsonMap = {};
  for (const item of recs(rec(lr.spec)?.limits)) {
    if (item.type !== 'Container') continue;
    Object.assign(requests, rec(item.defaultRequest));
    Object.assign(limits, rec(item.default));
  }
  const notes: string[] = [];
  const spec = rec(pod.spec) ?? {};
  const merge = (c: JsonMap, what: string) => {
    const res = ensureRec(c, 'resources');
    const set = (field: 'limits' | 'requests', defaults: JsonMap): string[] => {
      const have = ensureRec(res, field);
      const added = Object.keys(defaults).filter((k) => have[k] === undefined);
      for (const k of added) have[k] = defaults[k];
      if (Object.keys(have).length === 0) delete res[field];
      return added.sort();
    };
    const setLimits = set('limits', limits);
    const setRequests = set('requests', requests);
    if (setRequests.length > 0) notes.push(`${setRequests.join(', ')} request for ${what} ${str(c.name) ?? ''}`);
    if (setLimits.length > 0) notes.push(`${setLimits.join(', ')} limit for ${what} ${str(c.name) ?? ''}`);
  };
  for (const c of recs(spec.containers)) merge(c, 'container');
  for (const c of recs(spec.initContainers)) merge(c, 'init container');
  if (notes.length > 0) pod.metadata.annotations = { ...pod.metadata.annotations, [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
}

type Check = (type: string, resource: string, enforced: Quantity, requests: ResourceList, limits: ResourceList) => string | undefined;

const f = formatQuantity;
const cmp = compareQuantities;

/** Upstream minConstraint. */
const minConstraint: Check = (type, r, enforced, requests, limits) => {
  const req = requests[r];
  const lim = limits[r];
  if (!req) return `minimum ${r} usage per ${type} is ${f(enforced)}.  No request is specified`;
  if (cmp(req, enforced) < 0) return `minimum ${r} usage per ${type} is ${f(enforced)}, but request is ${f(req)}`;
  if (lim && cmp(lim, enforced) < 0) return `minimum ${r} usage per ${type} is ${f(enforced)}, but limit is ${f(lim)}`;
  return undefined;
};

/** Upstream maxConstraint. */
const maxConstraint: Check = (type, r, enforced, requests, limits) => {
  const req = requests[r];
  const lim = limits[r];
  if (!lim) return `maximum ${r} usage per ${type} is ${f(enforced)}.  No limit is specified`;
  if (cmp(lim, enforced) > 0) return `maximum ${r} usage per ${type} is ${f(enforced)}, but limit is ${f(lim)}`;
  if (req && cmp(req, enforced) > 0) return `maximum ${r} usage per ${type} is ${f(enforced)}, but request is ${f(req)}`;
  return undefined;
};

/** Upstream maxRequestConstraint (claims: only the request counts). */
const maxRequestConstraint: Check = (type, r, enforced, requests) => {
  const req = requests[r];
  if (!req) return `maximum ${r} usage per ${type} is ${f(enforced)}.  No request is specified`;
  if (cmp(req, enforced) > 0) return `maximum ${r} usage per ${type} is ${f(enforced)}, but request is ${f(req)}`;
  return undefined;
};

const asNumber = (q: Quantity) => Number(q.mantissa) * 10 ** q.exp;

/** Upstream limitRequestRatioConstraint. */
const ratioConstraint: Check = (type, r, enforced, requests, limits) => {
  const req = requests[r];
  const lim = limits[r];
  if (!req || req.mantissa === 0n) return `${r} max limit to request ratio per ${type} is ${f(enforced)}, but no request is specified or request is 0`;
  if (!lim || lim.mantissa === 0n) return `${r} max limit to request ratio per ${type} is ${f(enforced)}, but no limit is specified or limit is 0`;
  const ratio = asNumber(lim) / asNumber(req);
  if (ratio > asNumber(enforced)) return `${r} max limit to request ratio per ${type} is ${f(enforced)}, but provided ratio is ${ratio.toFixed(6)}`;
  return undefined;
};

/** Runs the item's min, max and ratio checks, in resource-name order within each. */
function bounds(item: JsonMap, requests: ResourceList, limits: ResourceList, max: Check): string[] {
  const type = str(item.type) ?? '';
  const out: string[] = [];
  for (const [field, check] of [['min', minConstraint], ['max', max], ['maxLimitRequestRatio', ratioConstraint]] as const) {
    const enforced = parseResourceList(item[field]);
    for (const r of Object.keys(enforced).sort()) {
      const why = check(type, r, enforced[r], requests, limits);
      if (why) out.push(why);
    }
  }
  return out;
}

/** Upstream PodValidateLimitFunc for one item: each container (Container), or the pod's sums without overhead (Pod). */
function podViolations(item: JsonMap, pod: KObject): string[] {
  const spec = rec(pod.spec) ?? {};
  if (item.type === 'Container') {
    const out: string[] = [];
    for (const c of [...recs(spec.containers), ...recs(spec.initContainers)]) {
      out.push(...bounds(item, parseResourceList(get(c, 'resources', 'requests')), parseResourceList(get(c, 'resources', 'limits')), maxConstraint));
    }
    return out;
  }
  if (item.type === 'Pod') return bounds(item, podResources(pod, 'requests', false), podResources(pod, 'limits', false), maxConstraint);
  return [];
}

/** Upstream PersistentVolumeClaimValidateLimitFunc: min and max of the storage request. */
function claimViolations(item: JsonMap, pvc: KObject): string[] {
  if (item.type !== 'PersistentVolumeClaim') return [];
  const requests = parseResourceList(get(pvc, 'spec', 'resources', 'requests'));
  return bounds({ type: item.type, min: item.min, max: item.max }, requests, {}, maxRequestConstraint);
}

