import type { ObjectSchema } from '../api/schema';
import { atomicList, bool, fieldsV1, int64, kindSchema, mapList, obj, ptr, setList, str, strMap, time, type Field } from './schema-builders';

/**
 * Schemas shared by several kinds: ObjectMeta and the small reference/selector/condition types.
 *
 * `required` lists are deliberately short everywhere: upstream decodes built-in kinds into typed
 * structs and never enforces OpenAPI required-ness, only hand-written validation. So a field is
 * marked required only when upstream validation rejects its absence, or when it is a list-map key.
 */

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

export const ownerReferenceSchema = obj(
  `${META}.OwnerReference`,
  {
    apiVersion: [5, ptr(str('API version of the referent.'))],
    kind: [1, ptr(str('Kind of the referent.'))],
    name: [3, ptr(str('Name of the referent.'))],
    uid: [4, ptr(str('UID of the referent.'))],
    controller: [6, ptr(bool('If true, this reference points to the managing controller.'))],
    blockOwnerDeletion: [7, ptr(bool('If true, the owner cannot be deleted from the key-value store until this reference is removed.'))],
  },
  // Required-ness is checked by validateOwnerReferences with upstream's messages.
  { atomic: true },
);

export const managedFieldsEntrySchema = obj(`${META}.ManagedFieldsEntry`, {
  manager: [1, str('The identifier of the workflow managing these fields.')],
  operation: [2, str('The type of operation which lead to this entry: Apply or Update.')],
  apiVersion: [3, str('The version of the resource the field set applies to.')],
  time: [4, time('When the entry was last changed.')],
  fieldsType: [6, str('The format of the fields field: FieldsV1.')],
  fieldsV1: [7, fieldsV1('The set of fields, as a nested f:<name> map.')],
  subresource: [8, str('The sub-resource that was written, empty for the main resource.')],
});

/** The one ObjectMeta schema (patch keys as upstream: finalizers set, ownerReferences by uid, managedFields atomic). */
export const objectMetaSchema: ObjectSchema = obj(`${META}.ObjectMeta`, {
  name: [1, str('Name must be unique within a namespace.')],
  generateName: [2, str('Optional prefix used by the server to generate a unique name.')],
  namespace: [3, str('Namespace defines the space within which each name must be unique.')],
  selfLink: [4, str('Deprecated; not set by the server.')],
  uid: [5, str('UID is the unique in time and space value for this object.')],
  resourceVersion: [6, str('An opaque value that represents the internal version of this object.')],
  generation: [7, int64('A sequence number representing a specific generation of the desired state.')],
  creationTimestamp: [8, time('CreationTimestamp is a timestamp representing the server time when this object was created.')],
  deletionTimestamp: [9, time('The time after which this resource will be deleted.')],
  deletionGracePeriodSeconds: [10, ptr(int64('Number of seconds allowed for this object to gracefully terminate.'))],
  labels: [11, strMap('Map of string keys and values that can be used to organize and categorize objects.')],
  annotations: [12, strMap('Unstructured key value map stored with a resource.')],
  ownerReferences: [13, mapList(ownerReferenceSchema, ['uid'], 'List of objects depended by this object.')],
  finalizers: [14, setList(str(), 'Must be empty before the object is deleted from the registry.')],
  managedFields: [17, atomicList(managedFieldsEntrySchema, 'Maps workflow-id and version to the set of fields managed by that workflow.')],
});

/** v1 ObjectReference (structType atomic upstream). */
export const objectReferenceSchema = obj(
  'k8s.io.api.core.v1.ObjectReference',
  {
    kind: [1, str('Kind of the referent.')],
    namespace: [2, str('Namespace of the referent.')],
    name: [3, str('Name of the referent.')],
    uid: [4, str('UID of the referent.')],
    apiVersion: [5, str('API version of the referent.')],
    resourceVersion: [6, str('Specific resourceVersion to which this reference is made, if any.')],
    fieldPath: [7, str('If referring to a piece of an object instead of an entire object, the path to that piece.')],
  },
  { atomic: true },
);

export const localObjectReferenceSchema = obj('k8s.io.api.core.v1.LocalObjectReference', { name: [1, str('Name of the referent.')] }, { atomic: true });

/** metav1.LabelSelector (structType atomic upstream). */
export const labelSelectorSchema = obj(
  `${META}.LabelSelector`,
  {
    matchLabels: [1, strMap('A map of {key,value} pairs; each is equivalent to an In requirement on key with that single value.')],
    matchExpressions: [
      2,
      atomicList(
        obj(`${META}.LabelSelectorRequirement`, {
          key: [1, ptr(str('The label key that the selector applies to.'))],
          operator: [2, ptr(str('The key\'s relationship to the values: In, NotIn, Exists or DoesNotExist.'))],
          values: [3, atomicList(str(), 'The values; non-empty for In and NotIn, empty for Exists and DoesNotExist.')],
        }),
        'A list of label selector requirements, ANDed together.',
      ),
    ],
  },
  { atomic: true },
);

/** metav1.Condition, the standard condition shape of newer types. */
export const metaConditionSchema = obj(
  `${META}.Condition`,
  {
    type: [1, ptr(str('Type of condition in CamelCase.'))],
    status: [2, ptr(str('Status of the condition: True, False or Unknown.', ['True', 'False', 'Unknown']))],
    observedGeneration: [3, int64('The .metadata.generation the condition was set based upon.')],
    lastTransitionTime: [4, time('The last time the condition transitioned from one status to another.')],
    reason: [5, ptr(str('A programmatic identifier for the reason of the last transition, in CamelCase.'))],
    message: [6, ptr(str('A human-readable message about the transition.'))],
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
);

/** Builds a kind's full schema with the shared metadata (field 1), e.g. withMeta('k8s.io.api.core.v1.Pod', { spec: [2, ...] }). */
export function withMeta(message: string, fields: Record<string, Field>, opts?: Parameters<typeof kindSchema>[3]): ObjectSchema {
  return kindSchema(message, objectMetaSchema, fields, opts);
}
