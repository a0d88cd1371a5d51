import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { invalid } from '../field-errors';
import { NAMESPACE_FINALIZER, validateFinalizers } from '../meta-validation';
import { ensureRec, get, rec, setDefault, strAt } from '../obj-access';
import type { DeletionStrategy, ResourceType, TableColumn } from '../resource-type';
import { atomicList, described, mapList, obj, ptr, str, strEnum, time } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** core/v1 Namespace. */

/** Upstream kubernetes.io/metadata.name, set on every namespace so selectors can match by name. */
export const LABEL_METADATA_NAME = 'svc.io/metadata.name';

export const namespaceSchema = withMeta('k8s.io.api.core.v1.Namespace', {
  spec: [
    2,
    described('Spec defines the behavior of the Namespace.', obj('k8s.io.api.core.v1.NamespaceSpec', {
      finalizers: [1, atomicList(str(), 'An opaque list of values that must be empty to permanently remove the object from storage.')],
    })),
  ],
  status: [
    3,
    described('Status describes the current status of a Namespace.', obj('k8s.io.api.core.v1.NamespaceStatus', {
      phase: [1, strEnum(['Active', 'Terminating'], 'Phase is the current lifecycle phase of the namespace.')],
      conditions: [
        2,
        mapList(
          obj(
            'k8s.io.api.core.v1.NamespaceCondition',
            {
              type: [1, ptr(str('Type of namespace controller condition.'))],
              status: [2, ptr(str('Status of the condition: True, False or Unknown.'))],
              lastTransitionTime: [4, time('Last time the condition transitioned from one status to another.')],
              reason: [5, str('Unique, one-word, CamelCase reason for the condition\'s last transition.')],
              message: [6, str('Human-readable message indicating details about the last transition.')],
            },
            { required: ['type'] },
          ),
          ['type'],
          'The latest available observations of the namespace\'s current state.',
        ),
      ],
    })),
  ],
});

/**
 * Upstream SetDefaults_Namespace/NamespaceStatus plus the create-time finalizer of its
 * PrepareForCreate. The finalizer is added when spec.finalizers is absent; on update
 * validateUpdate puts the stored finalizers back, so defaults never re-adds a removed one.
 */
function defaults(o: KObject): void {
  const name = o.metadata?.name;
  if (name) {
    o.metadata.labels = { ...(o.metadata.labels ?? {}), [LABEL_METADATA_NAME]: name };
  }
  setDefault(ensureRec(o, 'status'), 'phase', 'Active');
  const spec = ensureRec(o, 'spec');
  if (spec.finalizers === undefined || spec.finalizers === null) spec.finalizers = [NAMESPACE_FINALIZER];
}

function validate(o: KObject, old?: KObject): Cause[] {
  const out: Cause[] = [];
  const finalizers = get(o, 'spec', 'finalizers');
  if (Array.isArray(finalizers)) {
    // Upstream reports spec finalizers at spec.finalizers without an index.
    out.push(...validateFinalizers(finalizers, 'spec.finalizers', true).map((c) => ({ ...c, field: 'spec.finalizers' })));
  }
  // ValidateNamespaceStatusUpdate: the phase follows deletionTimestamp (checked when an update changes it).
  if (old && strAt(o, 'status', 'phase') !== strAt(old, 'status', 'phase')) {
    const phase = strAt(o, 'status', 'phase');
    if (!o.metadata?.deletionTimestamp && phase !== 'Active') {
      out.push(invalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty"));
    } else if (o.metadata?.deletionTimestamp && phase !== 'Terminating') {
      out.push(invalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"));
    }
  }
  return out;
}

/** Upstream PrepareForUpdate: spec.finalizers only change through the finalize sub-resource, so an update keeps the old ones. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const oldSpec = rec(old.spec);
  const spec = ensureRec(o, 'spec');
  if (oldSpec && oldSpec.finalizers !== undefined) spec.finalizers = structuredClone(oldSpec.finalizers);
  else delete spec.finalizers;
  return [];
}

/**
 * Upstream's namespace storage: a deleted namespace turns Terminating and stays while its
 * spec.finalizers hold it (the namespace controller empties them, as upstream's does through
 * /finalize). Differs from upstream's ShouldDeleteNamespaceDuringUpdate: an update that takes the
 * last metadata finalizer off never removes a namespace; the namespace controller removes it once
 * it is empty (controllers/namespace-controller.ts).
 */
const namespaceDeletion: DeletionStrategy = {
  holdsDeletion: (o) => ((o.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []).length > 0,
  markTerminating(o) {
    (o.status as Record<string, unknown> | undefined) ??= {};
    (o.status as Record<string, unknown>).phase = 'Terminating';
  },
  deleteWhenFinalized: () => false,
};

export function namespaceColumns(now: Now): TableColumn[] {
  return [column('Status', 'string', 'The status of the namespace', (o) => strAt(o, 'status', 'phase')), ageColumn(now)];
}

export function makeNamespaceType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    listKind: 'NamespaceList',
    namespaced: false,
    shortNames: ['ns'],
    schema: namespaceSchema,
    hasStatus: true,
    specFields: [],
    fieldSelectors: {
      'status.phase': (o) => strAt(o, 'status', 'phase'),
      // Upstream keeps the legacy "name" field label for namespaces.
      name: (o) => o.metadata?.name ?? '',
    },
    tableColumns: namespaceColumns(now),
    defaults,
    validate,
    validateUpdate,
    deletion: namespaceDeletion,
  };
}

export const namespaceType: ResourceType = makeNamespaceType();
