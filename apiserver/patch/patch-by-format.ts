/** Applies a PATCH body of one of the three transforming formats (named so that readers looking for server-side apply, Appendix C, do not land here). */
import { applyJsonPatch } from './json-patch';
import { applyMergePatch } from './merge-patch';
import { applyStrategicMergePatch } from './strategic-merge';

/** The PATCH body formats of spec 4.3 that transform the stored object (server-side apply is not one of them). */
export type PatchFormat = 'json-patch' | 'merge-patch' | 'strategic-merge-patch';

/** The object after applying a parsed patch of one format; the schema drives strategic merge's list keys. Throws the format's ApiError for a patch that cannot apply. */
export function applyPatch(format: PatchFormat, current: unknown, patch: unknown, schema: Parameters<typeof applyStrategicMergePatch>[2]): unknown {
  switch (format) {
    case 'json-patch':
      return applyJsonPatch(current, patch);
    case 'merge-patch':
      return applyMergePatch(current, patch);
    case 'strategic-merge-patch':
      return applyStrategicMergePatch(current, patch, schema);
  }
}
