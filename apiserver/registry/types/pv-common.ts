import type { Cause } from '../../api/errors';
import { forbidden, index, notSupported, required } from '../field-errors';
import { bothKeys } from '../../api/group-names';
import { get, strs } from '../obj-access';

/** Pieces PersistentVolumes and PersistentVolumeClaims share. */

export const ACCESS_MODES: readonly string[] = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];
export const VOLUME_MODES: readonly string[] = ['Block', 'Filesystem'];
/** Upstream's beta storage-class annotation (volume.beta.kubernetes.io/storage-class). */
export const STORAGE_CLASS_ANNOTATION = 'volume.beta.svc.io/storage-class';
const STORAGE_CLASS_KEYS = bothKeys(STORAGE_CLASS_ANNOTATION);

/** The beta storage-class annotation in either spelling, or undefined when the object has none. */
export function storageClassAnnotation(o: { metadata?: { annotations?: Record<string, string> } }): string | undefined {
  const a = o.metadata?.annotations;
  if (!a) return undefined;
  for (const k of STORAGE_CLASS_KEYS) if (typeof a[k] === 'string') return a[k];
  return undefined;
}

/**
 * Upstream GetPersistentVolume(Claim)Class: the beta annotation wins over spec.storageClassName;
 * '' when neither is set (a claim asking for no class, or one the DefaultStorageClass plugin left).
 */
export function storageClassOf(o: { metadata?: { annotations?: Record<string, string> }; spec?: unknown }): string {
  const annotated = storageClassAnnotation(o);
  if (annotated !== undefined) return annotated;
  const v = get(o.spec, 'storageClassName');
  return typeof v === 'string' ? v : '';
}

/** Upstream GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order. */
export function accessModesString(v: unknown): string {
  const modes = new Set(strs(v));
  const out: string[] = [];
  if (modes.has('ReadWriteOnce')) out.push('RWO');
  if (modes.has('ReadOnlyMany')) out.push('ROX');
  if (modes.has('ReadWriteMany')) out.push('RWX');
  if (modes.has('ReadWriteOncePod')) out.push('RWOP');
  return out.join(',');
}

/** Access modes: at least one, each known, ReadWriteOncePod alone. */
export function accessModeCauses(v: unknown, path: string, requiredDetail = ''): Cause[] {
  const modes = strs(v);
  const out: Cause[] = [];
  if (modes.length === 0) out.push(required(path, requiredDetail));
  modes.forEach((m, i) => {
    if (!ACCESS_MODES.includes(m)) out.push(notSupported(index(path, i), m, ACCESS_MODES));
  });
  if (modes.includes('ReadWriteOncePod') && modes.length > 1) out.push(forbidden(path, 'may not use ReadWriteOncePod with other access modes'));
  return out;
}
