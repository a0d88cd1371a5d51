import type { Cause } from '../api/errors';
import { sameGroup } from '../api/group-names';
import { isObject, type ObjectMeta } from '../api/types';
import { child, forbidden, immutable, invalid, required, tooLong } from './field-errors';
import {
  byteLen,
  dns1035LabelErrors,
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  labelValueErrors,
  pathSegmentErrors,
  qualifiedNameErrors,
} from '../api/name-validation';

/**
 * Generic object metadata validation, as upstream's apimachinery ValidateObjectMetaAccessor and
 * ValidateObjectMetaAccessorUpdate (plus core's extra finalizer-name rule). Field paths start at
 * "metadata" and messages are upstream's.
 */

/**
 * How a kind's names are checked. Upstream: most kinds use DNS-1123 subdomains; namespaces DNS-1123
 * labels; services DNS-1035 labels (start with a letter); PVs, PVCs, CSRs and RBAC objects only need
 * to be a valid URL path segment.
 */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path-segment';

export interface MetaValidationOptions {
  namespaced: boolean;
  nameRule: NameRule;
  /**
   * Built-in kinds (default) also require every finalizer without a '/' to be a standard one
   * (upstream core's validateKubeFinalizerName); custom resources pass false.
   */
  strictFinalizers?: boolean;
}

/** The finalizer the namespace controller owns (upstream "kubernetes"; renamed as the spec renames k8s to svc). */
export const NAMESPACE_FINALIZER = 'svc';
/** Finalizers without a domain prefix that built-in kinds accept (upstream IsStandardFinalizerName). */
export const STANDARD_FINALIZERS: readonly string[] = [NAMESPACE_FINALIZER, 'orphan', 'foregroundDeletion'];
/** Upstream TotalAnnotationSizeLimitB: 256 KiB over all keys and values. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

export const isDnsSubdomain = (s: string): boolean => dns1123SubdomainErrors(s).length === 0;
export const isDnsLabel = (s: string): boolean => dns1123LabelErrors(s).length === 0;
export const isDns1035Label = (s: string): boolean => dns1035LabelErrors(s).length === 0;
export const isQualifiedName = (s: string): boolean => qualifiedNameErrors(s).length === 0;
export const isValidLabelValue = (s: string): boolean => labelValueErrors(s).length === 0;

/** Upstream's maskTrailingDash: a generateName prefix may end in '-', so check it as if it did not. */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? name.slice(0, -2) + 'a' : name;
}

/** Messages for a name (or a generateName prefix) under the given rule. */
export function nameErrors(name: string, rule: NameRule, prefix = false): string[] {
  switch (rule) {
    case 'subdomain':
      return dns1123SubdomainErrors(prefix ? maskTrailingDash(name) : name);
    case 'label':
      return dns1123LabelErrors(prefix ? maskTrailingDash(name) : name);
    case 'dns1035':
      return dns1035LabelErrors(prefix ? maskTrailingDash(name) : name);
    case 'path-segment':
      return pathSegmentErrors(name, prefix);
  }
}

/** ValidateObjectMeta for create (and as the first half of update). */
export function validateObjectMeta(meta: ObjectMeta | undefined, opts: MetaValidationOptions): Cause[] {
  const m: ObjectMeta = meta ?? {};
  const out: Cause[] = [];
  const path = 'metadata';
  if (m.generateName) {
    for (const msg of nameErrors(m.generateName, opts.nameRule, true)) out.push(invalid(child(path, 'generateName'), m.generateName, msg));
  }
  if (!m.name) {
    // The server generates the name from generateName before persisting, so only both empty is an error.
    if (!m.generateName) out.push(required(child(path, 'name'), 'name or generateName is required'));
  } else {
    for (const msg of nameErrors(m.name, opts.nameRule)) out.push(invalid(child(path, 'name'), m.name, msg));
  }
  if (opts.namespaced) {
    if (!m.namespace) out.push(required(child(path, 'namespace')));
    else for (const msg of dns1123LabelErrors(m.namespace)) out.push(invalid(child(path, 'namespace'), m.namespace, msg));
  } else if (m.namespace) {
    out.push(forbidden(child(path, 'namespace'), 'not allowed on this type'));
  }
  if (typeof m.generation === 'number' && m.generation < 0) {
    out.push(invalid(child(path, 'generation'), m.generation, 'must be greater than or equal to 0'));
  }
  out.push(...validateLabels(m.labels, child(path, 'labels')));
  out.push(...validateAnnotations(m.annotations, child(path, 'annotations')));
  out.push(...validateOwnerReferences(m.ownerReferences, child(path, 'ownerReferences')));
  out.push(...validateFinalizers(m.finalizers, child(path, 'finalizers'), opts.strictFinalizers ?? true));
  out.push(...validateManagedFields(m.managedFields, child(path, 'managedFields')));
  return out;
}

/**
 * ValidateObjectMetaUpdate: name, namespace, uid and creationTimestamp may not change (an empty uid
 * or creationTimestamp in the new object means "not sent" and is not an error: the server copies
 * them from the old object, as upstream's BeforeUpdate does); no finalizers may be added once
 * deletion started; deletionTimestamp and deletionGracePeriodSeconds may not be changed by an update.
 * The labels/annotations/... content rules are validateObjectMeta's job.
 */
export function validateMetaUpdate(newMeta: ObjectMeta | undefined, oldMeta: ObjectMeta | undefined): Cause[] {
  const n: ObjectMeta = newMeta ?? {};
  const o: ObjectMeta = oldMeta ?? {};
  const path = 'metadata';
  const out: Cause[] = [];
  if (o.deletionTimestamp) {
    const had = new Set(o.finalizers ?? []);
    const extra = [...new Set((n.finalizers ?? []).filter((f) => !had.has(f)))].sort();
    if (extra.length) {
      out.push(
        forbidden(
          child(path, 'finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  if (typeof n.generation === 'number' && typeof o.generation === 'number' && n.generation < o.generation) {
    out.push(invalid(child(path, 'generation'), n.generation, 'must not be decremented'));
  }
  if ((n.name ?? '') !== (o.name ?? '')) out.push(immutable(child(path, 'name'), n.name ?? ''));
  if ((n.namespace ?? '') !== (o.namespace ?? '')) out.push(immutable(child(path, 'namespace'), n.namespace ?? ''));
  if (n.uid && n.uid !== (o.uid ?? '')) out.push(immutable(child(path, 'uid'), n.uid));
  if (n.creationTimestamp && o.creationTimestamp && !sameInstant(n.creationTimestamp, o.creationTimestamp)) {
    out.push(immutable(child(path, 'creationTimestamp'), n.creationTimestamp));
  }
  if (n.deletionTimestamp && (!o.deletionTimestamp || !sameInstant(n.deletionTimestamp, o.deletionTimestamp))) {
    out.push(immutable(child(path, 'deletionTimestamp'), n.deletionTimestamp));
  }
  if (n.deletionGracePeriodSeconds !== undefined && n.deletionGracePeriodSeconds !== null && n.deletionGracePeriodSeconds !== o.deletionGracePeriodSeconds) {
    out.push(immutable(child(path, 'deletionGracePeriodSeconds'), n.deletionGracePeriodSeconds));
  }
  return out;
}

function sameInstant(a: string, b: string): boolean {
  if (a === b) return true;
  const ta = Date.parse(a);
  const tb = Date.parse(b);
  // Timestamps are second-precision on the wire; compare at that precision.
  return Number.isFinite(ta) && Number.isFinite(tb) && Math.floor(ta / 1000) === Math.floor(tb / 1000);
}

/** v1validation.ValidateLabels: every key a qualified name, every value a label value; path is the map itself. */
export function validateLabels(labels: unknown, path: string): Cause[] {
  if (!isObject(labels)) return [];
  const out: Cause[] = [];
  for (const [k, v] of Object.entries(labels)) {
    for (const msg of qualifiedNameErrors(k)) out.push(invalid(path, k, msg));
    if (typeof v === 'string') for (const msg of labelValueErrors(v)) out.push(invalid(path, v, msg));
  }
  return out;
}

/** ValidateAnnotations: keys are qualified names compared case-insensitively; total size ≤ 256 KiB. */
export function validateAnnotations(annotations: unknown, path: string): Cause[] {
  if (!isObject(annotations)) return [];
  const out: Cause[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const msg of qualifiedNameErrors(k.toLowerCase())) out.push(invalid(path, k, msg));
    total += byteLen(k) + (typeof v === 'string' ? byteLen(v) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) out.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return out;
}

/** ValidateOwnerReferences. Upstream reports per-reference fields without an index; we keep that. */
export function validateOwnerReferences(refs: unknown, path: string): Cause[] {
  if (!Array.isArray(refs)) return [];
  const out: Cause[] = [];
  let firstController = '';
  for (const r of refs) {
    if (!isObject(r)) continue;
    const apiVersion = typeof r.apiVersion === 'string' ? r.apiVersion : '';
    const kind = typeof r.kind === 'string' ? r.kind : '';
    const name = typeof r.name === 'string' ? r.name : '';
    const uid = typeof r.uid === 'string' ? r.uid : '';
    const parts = apiVersion.split('/');
    const version = parts.length === 1 ? parts[0] : parts.length === 2 ? parts[1] : '';
    const group = parts.length === 2 ? parts[0] : '';
    if (!version) out.push(invalid(child(path, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (!kind) out.push(invalid(child(path, 'kind'), kind, 'must not be empty'));
    if (!name) out.push(invalid(child(path, 'name'), name, 'must not be empty'));
    if (!uid) out.push(invalid(child(path, 'uid'), uid, 'must not be empty'));
    // Upstream BannedOwners: events.svc.io/v1 Events (events.k8s.io/v1 too) may not own anything.
    if (sameGroup(group, 'events.svc.io') && version === 'v1' && kind === 'Event') {
      out.push(invalid(path, r, `${group}/${version}, Kind=${kind} is disallowed from being an owner`));
    }
    if (r.controller === true) {
      const cur = `${kind}/${name}`;
      if (firstController) {
        out.push(
          invalid(path, refs, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${cur}`),
        );
      } else firstController = cur;
    }
  }
  return out;
}

/** ValidateFinalizers: qualified names, not both orphan and foregroundDeletion; built-ins also need a domain or a standard name. */
export function validateFinalizers(finalizers: unknown, path: string, strict = true): Cause[] {
  if (!Array.isArray(finalizers)) return [];
  const out: Cause[] = [];
  finalizers.forEach((f, i) => {
    if (typeof f !== 'string') return;
    for (const msg of qualifiedNameErrors(f)) out.push(invalid(path, f, msg));
    if (strict && !f.includes('/') && !STANDARD_FINALIZERS.includes(f)) {
      out.push(invalid(`${path}[${i}]`, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    out.push(invalid(path, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return out;
}

/** ValidateManagedFields: operation Apply or Update, fieldsType FieldsV1, manager ≤ 128 printable characters. */
export function validateManagedFields(entries: unknown, path: string): Cause[] {
  if (!Array.isArray(entries)) return [];
  const out: Cause[] = [];
  entries.forEach((e, i) => {
    if (!isObject(e)) return;
    const p = `${path}[${i}]`;
    if (e.operation !== 'Apply' && e.operation !== 'Update') out.push(invalid(child(p, 'operation'), e.operation ?? '', 'must be `Apply` or `Update`'));
    if (typeof e.fieldsType === 'string' && e.fieldsType && e.fieldsType !== 'FieldsV1') {
      out.push(invalid(child(p, 'fieldsType'), e.fieldsType, 'must be `FieldsV1`'));
    }
    if (typeof e.manager === 'string') {
      if (e.manager.length > 128) out.push(tooLong(child(p, 'manager'), 128));
      // eslint-disable-next-line no-control-regex -- control characters are exactly what this check looks for
      const bad = /[\x00-\x1f\x7f]/.exec(e.manager);
      if (bad) {
        const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
        out.push(invalid(child(p, 'manager'), e.manager, `invalid character U+${code} (at position ${bad.index})`));
      }
    }
    if (typeof e.subresource === 'string' && e.subresource.length > 256) out.push(tooLong(child(p, 'subresource'), 256));
  });
  return out;
}
