import { ApiError, type Cause } from '../api/errors';
import { describePath } from './path-element';
import type { Conflict } from './updater';

/**
 * The 409 of an apply that would change fields other managers own (spec 7), worded as
 * upstream's NewConflictError so that kubectl and client libraries print what they print for
 * kube-apiserver: one cause per field (reason FieldManagerConflict, `conflict with "mgr" using
 * v1`, field `.data.key`), and a message naming them, grouped by manager when there are several.
 */
export function conflictError(conflicts: readonly Conflict[]): ApiError {
  const sorted = [...conflicts].sort((a, b) => (a.manager < b.manager ? -1 : a.manager > b.manager ? 1 : 0));
  const causes: Cause[] = sorted.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: describePath(c.path) }));
  return new ApiError('Conflict', conflictMessage(sorted), { causes });
}

function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) {
    return `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].manager)}: ${describePath(conflicts[0].path)}`;
  }
  const lines: string[] = [];
  let manager: string | undefined;
  for (const c of conflicts) {
    if (c.manager !== manager) {
      manager = c.manager;
      lines.push(`conflicts with ${printManager(manager)}:`);
    }
    lines.push(`- ${describePath(c.path)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/** A manager identity as upstream prints it: `"name"`, `with subresource "status"`, `using v1` for updaters. */
export function printManager(id: string): string {
  let e: { manager?: string; operation?: string; apiVersion?: string; subresource?: string };
  try {
    e = JSON.parse(id) as typeof e;
  } catch {
    return JSON.stringify(id);
  }
  let s = JSON.stringify(e.manager ?? '');
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${e.apiVersion ?? ''}`;
  return s;
}
