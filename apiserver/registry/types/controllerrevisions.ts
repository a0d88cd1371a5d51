import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { nonNegative } from '../common-validation';
import { immutable, required } from '../field-errors';
import { num } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { decodedEqual } from '../semantic-equal';
import { described, int64, ptr, rawExtension } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/**
 * apps/v1 ControllerRevision: an immutable snapshot the StatefulSet and DaemonSet controllers
 * keep as their history (a strategic merge patch that restores the pod template), read by
 * `kubectl rollout history|undo`. Its data may never change; its revision number may.
 */

export const controllerRevisionSchema = withMeta('k8s.io.api.apps.v1.ControllerRevision', {
  data: [2, described('The serialized representation of the state (for StatefulSets and DaemonSets: a strategic merge patch replacing spec.template).', rawExtension())],
  revision: [3, ptr(int64('The revision of the state represented by data.'))],
});

/** Upstream ValidateControllerRevision. */
function validate(o: KObject): Cause[] {
  const out: Cause[] = [];
  if (o.data === undefined || o.data === null) out.push(required('data', 'data is mandatory'));
  out.push(...nonNegative('revision', o.revision));
  return out;
}

/** Upstream ValidateControllerRevisionUpdate: data is immutable. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  return decodedEqual(o.data, old.data) ? [] : [immutable('data', o.data)];
}

/** Upstream's Controller cell: the controlling owner as kind.group/name, lower case ("statefulset.apps/web"). */
function controllerCell(o: KObject): string {
  const ref = o.metadata.ownerReferences?.find((r) => r.controller === true);
  if (!ref) return '<none>';
  const slash = ref.apiVersion?.indexOf('/') ?? -1;
  const group = slash > 0 ? ref.apiVersion.slice(0, slash) : '';
  const kind = ref.kind ?? '';
  if (!kind) return ref.name ?? '';
  return `${(group ? `${kind}.${group}` : kind).toLowerCase()}/${ref.name ?? ''}`;
}

export function controllerRevisionColumns(now: Now): TableColumn[] {
  return [
    column('Controller', 'string', 'Controller of the object', controllerCell),
    column('Revision', 'integer', 'Revision indicates the revision of the state represented by Data.', (o) => num(o.revision) ?? 0),
    ageColumn(now),
  ];
}

export function makeControllerRevisionType(now: Now = Date.now): ResourceType {
  return {
    group: 'apps',
    version: 'v1',
    resource: 'controllerrevisions',
    singular: 'controllerrevision',
    kind: 'ControllerRevision',
    listKind: 'ControllerRevisionList',
    namespaced: true,
    schema: controllerRevisionSchema,
    hasStatus: false,
    tableColumns: controllerRevisionColumns(now),
    validate,
    validateUpdate,
  };
}

export const controllerRevisionType: ResourceType = makeControllerRevisionType();
