import type { Cause } from '../../api/errors';
import { forbidden, index, notSupported, required } from '../field-errors';
import { strs } from '../obj-access';

/** Pieces PersistentVolumes and PersistentVolumeClaims share. */

export const ACCESS_MODES: readonly string[] = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];
export const VOLUME_MODES: readonly string[] = ['Block', 'Filesystem'];
/** Upstream's beta storage-class annotation (volume.beta.kubernetes.io/storage-class). */
export const STORAGE_CLASS_ANNOTATION = 'volume.beta.svc.io/storage-class';

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
