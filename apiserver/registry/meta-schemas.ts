import type { ObjectSchema } from '../api/schema';
import { atomicList, bool, described, int32, int64, obj, ptr, str, typeMeta } from './schema-builders';

/**
 * meta/v1 shapes that are not kinds of their own: ListMeta and the list envelope, Status,
 * DeleteOptions. Field numbers are upstream's apimachinery meta/v1 generated.proto.
 */

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

export const listMetaSchema: ObjectSchema = obj(`${META}.ListMeta`, {
  selfLink: [1, str('Deprecated; not set by the server.')],
  resourceVersion: [2, str('The revision of the store this list was read at.')],
  continue: [3, str('Set when more items are available: pass it back to read the next page.')],
  remainingItemCount: [4, ptr(int64('How many items follow this page (an estimate when a selector applies).'))],
  shardInfo: [5, described('The shard of the collection this list covers, when sharded.', obj(`${META}.ShardInfo`, { selector: [1, ptr(str('The selector of the shard.'))] }))],
});

const statusCauseSchema = obj(`${META}.StatusCause`, {
  reason: [1, str('A machine-readable description of the cause of the error.')],
  message: [2, str('A human-readable description of the cause of the error.')],
  field: [3, str('The field of the resource that caused the error.')],
});

export const statusSchema: ObjectSchema = obj(`${META}.Status`, {
  ...typeMeta(),
  metadata: [1, described('Standard list metadata.', listMetaSchema)],
  status: [2, str('Success or Failure.')],
  message: [3, str('A human-readable description of the status of this operation.')],
  reason: [4, str('A machine-readable description of why this operation is in the Failure status.')],
  details: [
    5,
    described(
      'Extended data associated with the reason.',
      obj(`${META}.StatusDetails`, {
        name: [1, str('The name attribute of the resource associated with the status.')],
        group: [2, str('The group attribute of the resource associated with the status.')],
        kind: [3, str('The kind attribute of the resource associated with the status.')],
        uid: [6, str('UID of the resource, if a single resource can be identified.')],
        causes: [4, atomicList(statusCauseSchema, 'The causes of the error, with extended detail.')],
        retryAfterSeconds: [5, int32('If set, the number of seconds the client should wait before retrying.')],
      }),
    ),
  ],
  code: [6, int32('Suggested HTTP return code for this status, 0 if not set.')],
});

export const deleteOptionsSchema: ObjectSchema = obj(`${META}.DeleteOptions`, {
  ...typeMeta(),
  gracePeriodSeconds: [1, ptr(int64('The duration in seconds before the object should be deleted.'))],
  preconditions: [
    2,
    described(
      'Must be fulfilled before a deletion is carried out.',
      obj(`${META}.Preconditions`, {
        uid: [1, ptr(str('The target UID.'))],
        resourceVersion: [2, ptr(str('The target resourceVersion.'))],
      }),
    ),
  ],
  orphanDependents: [3, ptr(bool('Deprecated: whether dependents are orphaned.'))],
  propagationPolicy: [4, ptr(str('Orphan, Background or Foreground.'))],
  dryRun: [5, atomicList(str(), 'All: process every stage without persisting.')],
  ignoreStoreReadErrorWithClusterBreakingPotential: [6, ptr(bool('Delete a corrupt object that cannot be read.'))],
});

/**
 * The list of a kind (upstream's XList: metadata 1, items 2). Its message name is the item's
 * with a List suffix, as every upstream list type is named. A JSON-only item schema gives a
 * list without a protobuf form (the codec refuses it).
 */
export function listSchemaOf(item: ObjectSchema): ObjectSchema {
  let list = lists.get(item);
  if (!list) {
    list = obj(`${item.proto?.name ?? 'k8s.io.apimachinery.pkg.apis.meta.v1.'}List`, {
      ...typeMeta(),
      metadata: [1, described('Standard list metadata.', listMetaSchema)],
      items: [2, atomicList(item, 'The list of objects.')],
    });
    lists.set(item, list);
  }
  return list;
}

/** One list schema per item schema, so the codec compiles each list once. */
const lists = new WeakMap<ObjectSchema, ObjectSchema>();
