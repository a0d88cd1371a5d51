import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { qualifiedNameErrors } from '../../api/name-validation';
import { withMeta } from '../common-schemas';
import { messages } from '../common-validation';
import { child, index, invalid, key, required } from '../field-errors';
import { get, rec, recs, str, strs } from '../obj-access';
import { formatQuantity, parseQuantity } from '../quantity';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, described, obj, quantityMap, str as s, strEnum } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** core/v1 ResourceQuota: hard limits per namespace; status.used is kept by the quota controller and the ResourceQuota admission plugin. */

const V1 = 'k8s.io.api.core.v1';

/** Upstream's standard quota resource names (helper.IsStandardQuotaResourceName, hugepages apart). */
const STANDARD_QUOTA_RESOURCES: readonly string[] = [
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
];
/** Upstream's integer resources (helper.IsIntegerResourceName, besides extended and count/ names). */
const INTEGER_RESOURCES: readonly string[] = ['pods', 'services', 'replicationcontrollers', 'resourcequotas', 'services.nodeports', 'services.loadbalancers', 'secrets', 'configmaps', 'persistentvolumeclaims'];
export const QUOTA_SCOPES: readonly string[] = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'];
const SELECTOR_OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

export function isStandardQuotaResource(name: string): boolean {
  return STANDARD_QUOTA_RESOURCES.includes(name) || name.startsWith('hugepages-') || name.startsWith('requests.hugepages-');
}

const scopeSelectorSchema = obj(`${V1}.ScopeSelector`, {
  matchExpressions: [
    1,
    atomicList(
      obj(`${V1}.ScopedResourceSelectorRequirement`, {
        scopeName: [1, strEnum(QUOTA_SCOPES, 'The name of the scope that the selector applies to.')],
        operator: [2, strEnum(SELECTOR_OPERATORS, "Represents a scope's relationship to a set of values: In, NotIn, Exists, DoesNotExist.")],
        values: [3, atomicList(s(), 'An array of string values; non-empty for In and NotIn, empty for Exists and DoesNotExist.')],
      }, { required: ['scopeName', 'operator'] }),
      'A list of scope selector requirements by scope of the resources.',
    ),
  ],
});

export const resourceQuotaSchema = withMeta(`${V1}.ResourceQuota`, {
  spec: [
    2,
    described('Spec defines the desired quota.', obj(`${V1}.ResourceQuotaSpec`, {
      hard: [1, quantityMap('The set of desired hard limits for each named resource.')],
      scopes: [2, atomicList(strEnum(QUOTA_SCOPES), 'A collection of filters that must match each object tracked by a quota.')],
      scopeSelector: [3, described('A collection of filters like scopes that must match each object tracked by a quota, expressed with operators.', scopeSelectorSchema)],
    })),
  ],
  status: [
    3,
    described('Status defines the actual enforced quota and its current usage.', obj(`${V1}.ResourceQuotaStatus`, {
      hard: [1, quantityMap('The set of enforced hard limits for each named resource.')],
      used: [2, quantityMap('The current observed total usage of the resource in the namespace.')],
    })),
  ],
});

/** Upstream ValidateResourceQuotaResourceName + ValidateResourceQuantityValue over one resource map. */
function validateQuotaList(path: string, m: unknown): Cause[] {
  const out: Cause[] = [];
  for (const [name, v] of Object.entries(rec(m) ?? {})) {
    const p = key(path, name);
    out.push(...messages(p, name, qualifiedNameErrors(name)));
    if (!name.includes('/') && !isStandardQuotaResource(name)) out.push(invalid(p, name, 'must be a standard resource for quota'));
    const q = typeof v === 'string' || typeof v === 'number' ? parseQuantity(v) : undefined;
    if (!q) continue;
    if (q.mantissa < 0n) out.push(invalid(p, formatQuantity(q), 'must be greater than or equal to 0'));
    const integer = INTEGER_RESOURCES.includes(name) || (name.includes('/') && !name.includes('kubernetes.io/') && !name.startsWith('requests.'));
    if (integer && q.exp < 0 && q.mantissa % 10n ** BigInt(-q.exp) !== 0n) out.push(invalid(p, formatQuantity(q), 'must be an integer'));
  }
  return out;
}

/** Upstream IsResourceQuotaScopeValidForResource (checked for standard resource names only). */
function scopeValidFor(scope: string, resource: string): boolean {
  const podCount = resource === 'pods';
  const compute = ['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory'].includes(resource);
  if (scope === 'BestEffort') return podCount;
  if (QUOTA_SCOPES.includes(scope)) return podCount || compute;
  return true;
}

/** Upstream validateResourceQuotaScopes and validateScopedResourceSelectorRequirement. */
function validateScopes(spec: Record<string, unknown>): Cause[] {
  const out: Cause[] = [];
  const hard = Object.keys(rec(spec.hard) ?? {}).sort();
  const seen = new Set<string>();
  const scopes = strs(spec.scopes);
  for (const scope of scopes) {
    if (!QUOTA_SCOPES.includes(scope)) out.push(invalid('spec.scopes', scopes, 'unsupported scope'));
    if (hard.some((k) => isStandardQuotaResource(k) && !scopeValidFor(scope, k))) out.push(invalid('spec.scopes', scopes, 'unsupported scope applied to resource'));
    seen.add(scope);
  }
  const base = 'spec.scopeSelector.matchExpressions';
  recs(rec(spec.scopeSelector)?.matchExpressions).forEach((req, i) => {
    const p = index(base, i);
    const scope = str(req.scopeName) ?? '';
    const op = str(req.operator) ?? '';
    const values = strs(req.values);
    if (!QUOTA_SCOPES.includes(scope)) out.push(invalid(child(p, 'scopeName'), scope, 'unsupported scope'));
    if (hard.some((k) => isStandardQuotaResource(k) && !scopeValidFor(scope, k))) out.push(invalid(base, spec.scopeSelector, 'unsupported scope applied to resource'));
    if (['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity'].includes(scope) && op !== 'Exists') {
      out.push(
        invalid(
          child(p, 'operator'),
          op,
          "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
        ),
      );
    }
    if ((op === 'In' || op === 'NotIn') && values.length === 0) out.push(required(child(p, 'values'), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
    else if ((op === 'Exists' || op === 'DoesNotExist') && values.length > 0) out.push(invalid(child(p, 'values'), values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
    else if (!SELECTOR_OPERATORS.includes(op)) out.push(invalid(child(p, 'operator'), op, 'not a valid selector operator'));
    seen.add(scope);
  });
  for (const [a, b] of [['BestEffort', 'NotBestEffort'], ['Terminating', 'NotTerminating']]) {
    if (seen.has(a) && seen.has(b)) out.push(invalid('spec.scopes', scopes, 'conflicting scopes'));
  }
  return out;
}

/** Upstream ValidateResourceQuota (spec and status). */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  return [...validateQuotaList('spec.hard', spec.hard), ...validateScopes(spec), ...validateQuotaList('status.hard', get(o, 'status', 'hard')), ...validateQuotaList('status.used', get(o, 'status', 'used'))];
}

/** Upstream printResourceQuota: "resource: used/hard" for each enforced resource, limits.* in their own column. */
function usageCell(o: KObject, limits: boolean): string {
  const hard = rec(get(o, 'status', 'hard')) ?? {};
  const used = rec(get(o, 'status', 'used')) ?? {};
  const show = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? (parseQuantity(v) ? formatQuantity(parseQuantity(v)!) : String(v)) : '0');
  return Object.keys(hard)
    .sort()
    .filter((r) => (r.split('.')[0] === 'limits') === limits)
    .map((r) => `${r}: ${show(used[r])}/${show(hard[r])}`)
    .join(', ');
}

export function resourceQuotaColumns(now: Now): TableColumn[] {
  return [
    ageColumn(now),
    column('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.', (o) => usageCell(o, false)),
    column('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.', (o) => usageCell(o, true)),
  ];
}

export function makeResourceQuotaType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'resourcequotas',
    singular: 'resourcequota',
    kind: 'ResourceQuota',
    listKind: 'ResourceQuotaList',
    namespaced: true,
    shortNames: ['quota'],
    schema: resourceQuotaSchema,
    hasStatus: true,
    specFields: ['spec'],
    tableColumns: resourceQuotaColumns(now),
    validate,
  };
}
