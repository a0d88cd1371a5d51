import type { Cause } from '../../api/errors';
import { labelSelectorRequirements } from '../../api/label-selector';
import { percentErrors } from '../../api/name-validation';
import { messages, nonNegative, validateLabelSelector } from '../common-validation';
import { invalid, required } from '../field-errors';
import { rec } from '../obj-access';
import type { TableColumn } from '../resource-type';
import { column } from '../table';
import { formatLabelSelector } from '../../api/label-selector';
import { containerColumns } from './workload-common';

/**
 * The validation pieces ReplicaSet and Deployment share (upstream's apps validation helpers), and
 * their wide columns from workload-common.ts. Kept apart from intOrPercentCauses there: a
 * Deployment's maxSurge may exceed 100% (upstream checks only maxUnavailable).
 */

/** Upstream ValidatePositiveIntOrPercent: a non-negative integer or a percent string ("25%"). */
export function intOrPercentErrors(path: string, v: unknown): Cause[] {
  if (typeof v === 'number') return nonNegative(path, v);
  if (typeof v === 'string') return messages(path, v, percentErrors(v));
  if (v === undefined || v === null) return [];
  return [invalid(path, v, "must be an integer or percentage (e.g '5%')")];
}

/** Upstream IsNotMoreThan100Percent. */
export function notOver100Percent(path: string, v: unknown): Cause[] {
  const m = typeof v === 'string' ? /^([0-9]+)%$/.exec(v) : null;
  return m && Number(m[1]) > 100 ? [invalid(path, v, 'must not be greater than 100%')] : [];
}

/**
 * The selector rules of upstream ValidateReplicaSetSpec / ValidateDeploymentSpec: required, a valid
 * LabelSelector, and not empty (upstream's message says "deployment" for every kind).
 */
export function validateWorkloadSelector(sel: unknown, path: string): Cause[] {
  if (sel === undefined || sel === null) return [required(path, '')];
  const out = validateLabelSelector(sel, path);
  const reqs = labelSelectorRequirements(sel);
  if (out.length === 0 && reqs !== null && reqs.length === 0) out.push(invalid(path, sel, 'empty selector is invalid for deployment'));
  return out;
}

/** Upstream ValidateNonnegativeField for each named status counter. */
export function nonNegativeCounters(status: Record<string, unknown>, fields: readonly string[]): Cause[] {
  return fields.flatMap((f) => nonNegative(`status.${f}`, status[f]));
}

/** A status counter that may not exceed another (upstream: "cannot be greater than status.replicas"). */
export function notGreater(status: Record<string, unknown>, field: string, than: string, message: string): Cause[] {
  const a = status[field];
  const b = status[than];
  return typeof a === 'number' && typeof b === 'number' && a > b ? [invalid(`status.${field}`, a, message)] : [];
}

/** The wide columns of the pod-template workloads (upstream's printers): Containers, Images, Selector. */
export function workloadWideColumns(selectorDoc: string): TableColumn[] {
  return [...containerColumns(), column('Selector', 'string', selectorDoc, (o) => formatLabelSelector(rec(o.spec)?.selector), 1)];
}
