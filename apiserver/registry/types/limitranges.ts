import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { qualifiedNameErrors } from '../../api/name-validation';
import { withMeta } from '../common-schemas';
import { messages } from '../common-validation';
import { child, duplicate, forbidden, index, invalid, key, required } from '../field-errors';
import { rec, recs, str } from '../obj-access';
import { compareQuantities, formatQuantity, parseQuantity, type Quantity } from '../quantity';
import type { ResourceType } from '../resource-type';
import { atomicList, described, obj, quantityMap, str as s } from '../schema-builders';

/** core/v1 LimitRange: per-namespace defaults and bounds for containers, pods and claims, applied by the LimitRanger admission plugin. */

const V1 = 'k8s.io.api.core.v1';
export const LIMIT_TYPES: readonly string[] = ['Pod', 'Container', 'PersistentVolumeClaim'];

const limitRangeItemSchema = obj(
  `${V1}.LimitRangeItem`,
  {
    type: [1, s('Type of resource that this limit applies to: Pod, Container or PersistentVolumeClaim.')],
    max: [2, quantityMap('Max usage constraints on this kind by resource name.')],
    min: [3, quantityMap('Min usage constraints on this kind by resource name.')],
    default: [4, quantityMap('Default resource requirement limit value by resource name if resource limit is omitted.')],
    defaultRequest: [5, quantityMap('DefaultRequest is the default resource requirement request value by resource name if resource request is omitted.')],
    maxLimitRequestRatio: [6, quantityMap('If specified, the limit must be at most this many times the request for the named resource.')],
  },
  { required: ['type'] },
);

export const limitRangeSchema = withMeta(`${V1}.LimitRange`, {
  spec: [
    2,
    described('Spec defines the limits enforced.', obj(`${V1}.LimitRangeSpec`, { limits: [1, atomicList(limitRangeItemSchema, 'Limits is the list of LimitRangeItem objects that are enforced.')] }, { required: ['limits'] })),
  ],
});

/**
 * Upstream SetDefaults_LimitRangeItem, for Container items: a default limit defaults to max, a
 * default request to the default limit, else to min.
 */
function defaults(o: KObject): void {
  for (const item of recs(rec(o.spec)?.limits)) {
    if (item.type !== 'Container') continue;
    const def = (item.default = rec(item.default) ?? {});
    const req = (item.defaultRequest = rec(item.defaultRequest) ?? {});
    for (const [k, v] of Object.entries(rec(item.max) ?? {})) if (def[k] === undefined) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (req[k] === undefined) req[k] = v;
    for (const [k, v] of Object.entries(rec(item.min) ?? {})) if (req[k] === undefined) req[k] = v;
    if (Object.keys(def).length === 0) delete item.default;
    if (Object.keys(req).length === 0) delete item.defaultRequest;
  }
}

function quantities(m: unknown): Record<string, Quantity> {
  const out: Record<string, Quantity> = {};
  for (const [k, v] of Object.entries(rec(m) ?? {})) {
    const q = typeof v === 'string' || typeof v === 'number' ? parseQuantity(v) : undefined;
    if (q) out[k] = q;
  }
  return out;
}

/** Upstream validateLimitRangeTypeName / validateLimitRangeResourceName: a qualified name, standard when it has no domain. */
function validateName(path: string, name: string, standard: (n: string) => boolean, what: string): Cause[] {
  const out = messages(path, name, qualifiedNameErrors(name));
  if (out.length === 0 && !name.includes('/') && !standard(name)) out.push(invalid(path, name, `must be a standard ${what} or fully qualified`));
  return out;
}

const isContainerResource = (n: string) => ['cpu', 'memory', 'ephemeral-storage'].includes(n) || n.startsWith('hugepages-');
/** Upstream IsOvercommitAllowed: native resources other than hugepages. */
const overcommitAllowed = (n: string) => !n.includes('/') && !n.startsWith('hugepages-');

/** The cross-checks between one resource's min, max, defaults and ratio (upstream ValidateLimitRange's loop over keys). */
function validateBounds(p: string, k: string, q: Record<'min' | 'max' | 'def' | 'req' | 'ratio', Quantity | undefined>): Cause[] {
  const out: Cause[] = [];
  const f = formatQuantity;
  const gt = (a: Quantity, b: Quantity) => compareQuantities(a, b) > 0;
  const { min, max, def, req, ratio } = q;
  if (min && max && gt(min, max)) out.push(invalid(key(child(p, 'min'), k), f(min), `min value ${f(min)} is greater than max value ${f(max)}`));
  if (req && min && gt(min, req)) out.push(invalid(key(child(p, 'defaultRequest'), k), f(req), `min value ${f(min)} is greater than default request value ${f(req)}`));
  if (req && max && gt(req, max)) out.push(invalid(key(child(p, 'defaultRequest'), k), f(req), `default request value ${f(req)} is greater than max value ${f(max)}`));
  if (req && def && gt(req, def)) out.push(invalid(key(child(p, 'defaultRequest'), k), f(req), `default request value ${f(req)} is greater than default limit value ${f(def)}`));
  if (def && min && gt(min, def)) out.push(invalid(key(child(p, 'default'), k), f(min), `min value ${f(min)} is greater than default value ${f(def)}`));
  if (def && max && gt(def, max)) out.push(invalid(key(child(p, 'default'), k), f(max), `default value ${f(def)} is greater than max value ${f(max)}`));
  if (ratio && compareQuantities(ratio, { mantissa: 1n, exp: 0, format: 'DecimalSI' }) < 0) out.push(invalid(key(child(p, 'maxLimitRequestRatio'), k), f(ratio), `ratio ${f(ratio)} is less than 1`));
  if (ratio && min && max) {
    const num = (x: Quantity) => Number(x.mantissa) * 10 ** x.exp;
    const limit = num(max) / num(min);
    if (num(ratio) > limit) out.push(invalid(key(child(p, 'maxLimitRequestRatio'), k), f(ratio), `ratio ${f(ratio)} is greater than max/min = ${limit.toFixed(6)}`));
  }
  if (!overcommitAllowed(k) && def && req && compareQuantities(def, req) !== 0) {
    out.push(invalid(key(child(p, 'defaultRequest'), k), f(req), `default value ${f(def)} must equal to defaultRequest value ${f(req)} in ${k}`));
  }
  return out;
}

/** Upstream ValidateLimitRange. */
function validate(o: KObject): Cause[] {
  const out: Cause[] = [];
  const seen = new Set<string>();
  recs(rec(o.spec)?.limits).forEach((item, i) => {
    const p = index('spec.limits', i);
    const type = str(item.type) ?? '';
    if (type === '') out.push(required(child(p, 'type')));
    else out.push(...validateName(child(p, 'type'), type, (n) => LIMIT_TYPES.includes(n), 'limit type'));
    if (seen.has(type)) out.push(duplicate(child(p, 'type'), type));
    seen.add(type);
    const standard = type === 'PersistentVolumeClaim' ? (n: string) => n === 'storage' : isContainerResource;
    for (const field of ['max', 'min', 'maxLimitRequestRatio'] as const) {
      for (const k of Object.keys(rec(item[field]) ?? {})) out.push(...validateName(key(child(p, field), k), k, standard, 'resource type'));
    }
    const [min, max, ratio] = [quantities(item.min), quantities(item.max), quantities(item.maxLimitRequestRatio)];
    let def: Record<string, Quantity> = {};
    let req: Record<string, Quantity> = {};
    if (type === 'Pod') {
      if (Object.keys(rec(item.default) ?? {}).length > 0) out.push(forbidden(child(p, 'default'), "may not be specified when `type` is 'Pod'"));
      if (Object.keys(rec(item.defaultRequest) ?? {}).length > 0) out.push(forbidden(child(p, 'defaultRequest'), "may not be specified when `type` is 'Pod'"));
    } else {
      def = quantities(item.default);
      req = quantities(item.defaultRequest);
    }
    if (type === 'PersistentVolumeClaim' && !min.storage && !max.storage) out.push(required(child(p, 'limits'), 'either minimum or maximum storage value is required, but neither was provided'));
    const keys = new Set([...Object.keys(min), ...Object.keys(max), ...Object.keys(def), ...Object.keys(req), ...Object.keys(ratio)]);
    for (const k of [...keys].sort()) out.push(...validateBounds(p, k, { min: min[k], max: max[k], def: def[k], req: req[k], ratio: ratio[k] }));
  });
  return out;
}

export function makeLimitRangeType(): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'limitranges',
    singular: 'limitrange',
    kind: 'LimitRange',
    listKind: 'LimitRangeList',
    namespaced: true,
    shortNames: ['limits'],
    schema: limitRangeSchema,
    hasStatus: false,
    defaults,
    validate,
  };
}
