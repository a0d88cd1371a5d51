import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { percentErrors } from '../../api/name-validation';
import { messages, nonNegative } from '../common-validation';
import { invalid } from '../field-errors';
import { get, recs, str } from '../obj-access';
import { column } from '../table';
import type { TableColumn } from '../resource-type';

/**
 * Pieces the apps/v1 kinds of this folder share: upstream's int-or-percent checks and the wide
 * Containers / Images columns (the Selector column prints api/label-selector's formatLabelSelector).
 */

/** Upstream ValidatePositiveIntOrPercent + IsNotMoreThan100Percent. */
export function intOrPercentCauses(path: string, v: unknown): Cause[] {
  if (typeof v === 'number') return nonNegative(path, v);
  if (typeof v !== 'string') return [];
  const out = messages(path, v, percentErrors(v));
  const m = /^([0-9]+)%$/.exec(v);
  if (m && Number(m[1]) > 100) out.push(invalid(path, v, 'must not be greater than 100%'));
  return out;
}

/** Upstream getIntOrPercentValue: the number, or the percentage's number (0 for anything else). */
export function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return 0;
  const m = /^([0-9]+)%$/.exec(v);
  if (m) return Number(m[1]);
  return /^-?[0-9]+$/.test(v) ? Number(v) : 0;
}

/**
 * Upstream intstr.GetScaledValueFromIntOrPercent: an int as it is, a percentage of total rounded
 * up or down; undefined for a malformed value.
 */
export function scaledValue(v: unknown, total: number, roundUp: boolean): number | undefined {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const m = /^([0-9]+)%$/.exec(v);
  if (!m) return /^[0-9]+$/.test(v) ? Number(v) : undefined;
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

const templateContainers = (o: KObject) => recs(get(o, 'spec', 'template', 'spec', 'containers'));

/** The wide Containers and Images columns of workloads (upstream layoutContainerCells). */
export function containerColumns(): TableColumn[] {
  return [
    column('Containers', 'string', 'Names of each container in the template.', (o) => templateContainers(o).map((c) => str(c.name) ?? '').join(','), 1),
    column('Images', 'string', 'Images referenced by each container in the template.', (o) => templateContainers(o).map((c) => str(c.image) ?? '').join(','), 1),
  ];
}
