import type { ObjectSchema } from '../api/schema';
import { any, atomicList, bool, int64, kindSchema, mapList, obj, setList, str, strMap, time } from './schema-builders';

/**
 * Schemas shared by several kinds: ObjectMeta and the small reference/selector/condition types.
 *
 * `required` lists are deliberately short everywhere: upstream decodes built-in kinds into typed
 * structs and never enforces OpenAPI required-ness, only hand-written validation. So a field is
 * marked required only when upstream validation rejects its absence, or when it is a list-map key.
 */

export const ownerReferenceSchema = obj(
  {
    apiVersion: str('API version of the referent.'),
    kind: str('Kind of the referent.'),
    name: str('Name of the referent.'),
    uid: str('UID of the referent.'),
    controller: bool('If true, this reference points to the managing controller.'),
    blockOwnerDeletion: bool('If true, the owner cannot be deleted from the key-value store until this reference is removed.'),
  },
  // Required-ness is checked by validateOwnerReferences with upstream's messages.
  { atomic: true },
);

export const managedFieldsEntrySchema = obj({
  manager: str('The identifier of the workflow managing these fields.'),
  operation: str('The type of operation which lead to this entry: Apply or Update.'),
  apiVersion: str('The version of the resource the field set applies to.'),
  time: time('When the entry was last changed.'),
  fieldsType: str('The format of the fields field: FieldsV1.'),
  fieldsV1: any('The set of fields, as a nested f:<name> map.'),
  subresource: str('The sub-resource that was written, empty for the main resource.'),
});

/** The one ObjectMeta schema (patch keys as upstream: finalizers set, ownerReferences by uid, managedFields atomic). */
export const objectMetaSchema: ObjectSchema = obj({
  name: str('Name must be unique within a namespace.'),
  generateName: str('Optional prefix used by the server to generate a unique name.'),
  namespace: str('Namespace defines the space within which each name must be unique.'),
  selfLink: str('Deprecated; not set by the server.'),
  uid: str('UID is the unique in time and space value for this object.'),
  resourceVersion: str('An opaque value that represents the internal version of this object.'),
  generation: int64('A sequence number representing a specific generation of the desired state.'),
  creationTimestamp: time('CreationTimestamp is a timestamp representing the server time when this object was created.'),
  deletionTimestamp: time('The time after which this resource will be deleted.'),
  deletionGracePeriodSeconds: int64('Number of seconds allowed for this object to gracefully terminate.'),
  labels: strMap('Map of string keys and values that can be used to organize and categorize objects.'),
  annotations: strMap('Unstructured key value map stored with a resource.'),
  ownerReferences: mapList(ownerReferenceSchema, ['uid'], 'List of objects depended by this object.'),
  finalizers: setList(str(), 'Must be empty before the object is deleted from the registry.'),
  managedFields: atomicList(managedFieldsEntrySchema, 'Maps workflow-id and version to the set of fields managed by that workflow.'),
});

/** v1 ObjectReference (structType atomic upstream). */
export const objectReferenceSchema = obj(
  {
    kind: str(),
    namespace: str(),
    name: str(),
    uid: str(),
    apiVersion: str(),
    resourceVersion: str(),
    fieldPath: str(),
  },
  { atomic: true },
);

export const localObjectReferenceSchema = obj({ name: str() }, { atomic: true });

/** metav1.LabelSelector (structType atomic upstream). */
export const labelSelectorSchema = obj(
  {
    matchLabels: strMap(),
    matchExpressions: atomicList(
      obj({ key: str(), operator: str(), values: atomicList(str()) }),
    ),
  },
  { atomic: true },
);

/** metav1.Condition, the standard condition shape of newer types. */
export const metaConditionSchema = obj(
  {
    type: str(),
    status: str(undefined, ['True', 'False', 'Unknown']),
    observedGeneration: int64(),
    lastTransitionTime: time(),
    reason: str(),
    message: str(),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
);

/** Builds a kind's full schema with the shared metadata. */
export function withMeta(fields: Parameters<typeof kindSchema>[1], opts?: Parameters<typeof kindSchema>[2]): ObjectSchema {
  return kindSchema(objectMetaSchema, fields, opts);
}
