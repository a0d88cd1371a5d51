import type { Cause } from '../api/errors';
import { isObject } from '../api/types';
import { child, forbidden, index, invalid, key, notSupported, required } from './field-errors';
import { validateLabels } from './meta-validation';
import { ipErrors, labelValueErrors, portNameErrors, portNumErrors, qualifiedNameErrors } from '../api/name-validation';
import { parseQuantity } from './quantity';

/** Validation pieces several kinds share, each as upstream's helper of the same purpose. */

export const PORT_PROTOCOLS: readonly string[] = ['SCTP', 'TCP', 'UDP'];
export const CONDITION_STATUSES: readonly string[] = ['False', 'True', 'Unknown'];

/** Invalid causes for each message of a string validator. */
export function messages(path: string, value: unknown, msgs: readonly string[]): Cause[] {
  return msgs.map((m) => invalid(path, value, m));
}

/** ValidateNonnegativeField. */
export function nonNegative(path: string, v: unknown): Cause[] {
  return typeof v === 'number' && v < 0 ? [invalid(path, v, 'must be greater than or equal to 0')] : [];
}

/** ValidateQualifiedName. */
export function qualifiedName(path: string, v: string): Cause[] {
  return messages(path, v, qualifiedNameErrors(v));
}

/** unversionedvalidation.ValidateLabelSelector (selector absent is valid). */
export function validateLabelSelector(sel: unknown, path: string): Cause[] {
  if (!isObject(sel)) return [];
  const out = validateLabels(sel.matchLabels, child(path, 'matchLabels'));
  const exprs = Array.isArray(sel.matchExpressions) ? sel.matchExpressions : [];
  exprs.forEach((e, i) => {
    if (!isObject(e)) return;
    const p = index(child(path, 'matchExpressions'), i);
    const values = Array.isArray(e.values) ? e.values : [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) out.push(required(child(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) out.push(forbidden(child(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        out.push(invalid(child(p, 'operator'), e.operator ?? '', 'not a valid selector operator'));
    }
    out.push(...messages(child(p, 'key'), e.key ?? '', qualifiedNameErrors(typeof e.key === 'string' ? e.key : '')));
    values.forEach((v, j) => {
      if (typeof v === 'string') out.push(...messages(index(child(p, 'values'), j), v, labelValueErrors(v)));
    });
  });
  return out;
}

/** Port numbers in 1..65535. */
export function portNum(path: string, v: unknown): Cause[] {
  return messages(path, v ?? 0, portNumErrors(typeof v === 'number' ? v : 0));
}

/** ValidatePortNumOrName: an int-or-string port (targetPort, probe ports). */
export function portNumOrName(path: string, v: unknown): Cause[] {
  if (typeof v === 'number') return messages(path, v, portNumErrors(v));
  if (typeof v === 'string') return messages(path, v, portNameErrors(v));
  return [];
}

/** Protocol required and one of SCTP, TCP, UDP. */
export function protocol(path: string, v: unknown): Cause[] {
  if (v === undefined || v === null || v === '') return [required(path)];
  return typeof v === 'string' && PORT_PROTOCOLS.includes(v) ? [] : [notSupported(path, v, PORT_PROTOCOLS)];
}

/** A valid IP address. */
export function ip(path: string, v: unknown): Cause[] {
  return messages(path, v ?? '', ipErrors(typeof v === 'string' ? v : ''));
}

/** ValidateNonSpecialIP: endpoints may not point at unspecified, loopback or link-local addresses. */
export function nonSpecialIp(path: string, v: string): Cause[] {
  const lower = v.toLowerCase();
  if (v === '0.0.0.0' || lower === '::') return [invalid(path, v, 'may not be unspecified (0.0.0.0)')];
  if (v.startsWith('127.') || lower === '::1') return [invalid(path, v, 'may not be in the loopback range (127.0.0.0/8, ::1/128)')];
  if (v.startsWith('169.254.') || /^fe[89ab][0-9a-f]:/.test(lower)) return [invalid(path, v, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)')];
  if (v.startsWith('224.0.0.') || lower.startsWith('ff02:')) {
    return [invalid(path, v, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)')];
  }
  return [];
}

/** Resource lists (capacity, requests): names are qualified names, values non-negative quantities. */
export function resourceList(path: string, m: unknown, opts: { positive?: boolean } = {}): Cause[] {
  if (!isObject(m)) return [];
  const out: Cause[] = [];
  for (const [name, v] of Object.entries(m)) {
    const p = key(path, name);
    out.push(...messages(p, name, qualifiedNameErrors(name)));
    const q = typeof v === 'string' || typeof v === 'number' ? parseQuantity(v) : undefined;
    if (!q) continue; // malformed quantities are reported by the schema check
    if (q.mantissa < 0n) out.push(invalid(p, v, 'must be greater than or equal to 0'));
    else if (opts.positive && q.mantissa === 0n) out.push(invalid(p, v, 'must be greater than zero'));
  }
  return out;
}

/** A string in a fixed set, '' allowed only when optional. */
export function oneOf(path: string, v: unknown, valid: readonly string[], opts: { required?: boolean } = {}): Cause[] {
  if (v === undefined || v === null || v === '') return opts.required ? [required(path)] : [];
  return typeof v === 'string' && valid.includes(v) ? [] : [notSupported(path, v, valid)];
}
