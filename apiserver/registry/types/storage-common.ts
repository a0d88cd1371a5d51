import { bothKeys } from '../../api/group-names';
import { atomicList, described, int32, obj, ptr, str, time } from '../schema-builders';

/** Names and schemas the storage.svc.io/v1 kinds, the PV binder and the provisioner share. */

export const STORAGE_V1 = 'k8s.io.api.storage.v1';
const CORE_V1 = 'k8s.io.api.core.v1';

/** Upstream storageclass.kubernetes.io/is-default-class in svc's spelling; both spellings mark a default class. */
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.svc.io/is-default-class';
const DEFAULT_CLASS_KEYS = bothKeys(DEFAULT_CLASS_ANNOTATION);

/** Upstream IsDefaultAnnotation: the annotation's value is exactly "true" (in either spelling of its key). */
export function isDefaultClass(o: { metadata?: { annotations?: Record<string, string> } }): boolean {
  const a = o.metadata?.annotations;
  return a !== undefined && a !== null && DEFAULT_CLASS_KEYS.some((k) => a[k] === 'true');
}

export const RECLAIM_DELETE = 'Delete';
export const RECLAIM_RETAIN = 'Retain';
export const STORAGE_CLASS_RECLAIM_POLICIES: readonly string[] = [RECLAIM_DELETE, RECLAIM_RETAIN];
export const BINDING_IMMEDIATE = 'Immediate';
export const BINDING_WAIT_FOR_FIRST_CONSUMER = 'WaitForFirstConsumer';
export const VOLUME_BINDING_MODES: readonly string[] = [BINDING_IMMEDIATE, BINDING_WAIT_FOR_FIRST_CONSUMER];

/** core/v1 TopologySelectorTerm (StorageClass.allowedTopologies). */
export const topologySelectorTermSchema = obj(
  `${CORE_V1}.TopologySelectorTerm`,
  {
    matchLabelExpressions: [
      1,
      atomicList(
        obj(`${CORE_V1}.TopologySelectorLabelRequirement`, {
          key: [1, str('The label key that the selector applies to.')],
          values: [2, atomicList(str(), 'Label values; one of them must match.')],
        }),
        'A list of topology selector requirements by labels.',
      ),
    ],
  },
  { atomic: true },
);

/** storage/v1 VolumeError (VolumeAttachment status). */
export const volumeErrorSchema = described(
  'The last error of an attach or detach.',
  obj(`${STORAGE_V1}.VolumeError`, {
    time: [1, time('When the error was encountered.')],
    message: [2, str('The error encountered during the attach or detach.')],
    errorCode: [3, ptr(int32('A numeric gRPC code of the error.'))],
  }),
);

interface ClassLike {
  metadata?: { name?: string; creationTimestamp?: string; annotations?: Record<string, string> };
}

/**
 * Upstream GetDefaultClass: of the classes marked default, the newest (by creationTimestamp), the
 * first by name among equally new ones; undefined when none is marked.
 */
export function defaultStorageClass<T extends ClassLike>(classes: readonly T[]): T | undefined {
  const created = (c: T) => Date.parse(c.metadata?.creationTimestamp ?? '') || 0;
  const name = (c: T) => c.metadata?.name ?? '';
  return classes
    .filter(isDefaultClass)
    .sort((a, b) => created(b) - created(a) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0))[0];
}
