import type { Schema } from '../api/schema';
import { isObject } from '../api/types';
import type { FieldSet } from './field-set';
import { describePath, type PathElement } from './path-element';
import { fieldSchema, isNamedField, keyedItems, shapeOf } from './typed';

/**
 * Removes from a merged object what an applier stopped applying (structured-merge-diff's
 * Updater.prune): a field, map key or list element goes when the applier's previous set had it
 * and no manager's set has it now (the applier's new set included). Its whole value goes with
 * it, even parts another manager updated (an element is owned by owning the element, not a field
 * in it); fields of a kept value that the applier owned and nobody owns now go the same way,
 * and fields nobody ever owned (defaults) stay. The store defaults the result again, so a
 * removed field with a default gets it back (Appendix C).
 *
 * A declared struct field counts as in a set when anything below it is (upstream's
 * EnsureNamedFieldsAreMembers); a map key or list element only when it is itself.
 *
 * `last` is the applier's previous set, `owned` the union of every manager's set after this
 * apply, both at the place of v. Unchanged subtrees are returned as they are.
 */
export function pruneRemoved(v: unknown, s: Schema | undefined, last: FieldSet, owned: FieldSet | undefined, path: PathElement[] = []): unknown {
  if (!last.children) return v;
  const shape = shapeOf(s, v);
  if (shape.kind === 'fields' && isObject(v)) {
    let out: Record<string, unknown> | undefined;
    for (const [pe, lastChild] of last.children) {
      if (pe[0] !== 'f') continue;
      const k = pe.slice(2);
      if (v[k] === undefined) continue;
      const named = isNamedField(shape, k);
      const ownedChild = owned?.children?.get(pe);
      path.push(pe);
      const kept = holds(lastChild, named) && !holds(ownedChild, named) ? undefined : pruneRemoved(v[k], fieldSchema(shape, k), lastChild, ownedChild, path);
      path.pop();
      if (kept === v[k]) continue;
      out ??= { ...v };
      if (kept === undefined) delete out[k];
      else out[k] = kept;
    }
    return out ?? v;
  }
  if (shape.kind === 'list' && Array.isArray(v)) {
    let changed = false;
    const out: unknown[] = [];
    for (const [pe, item] of keyedItems(shape.list, v, () => describePath(path))) {
      const lastChild = last.children.get(pe);
      if (!lastChild) {
        out.push(item);
        continue;
      }
      const ownedChild = owned?.children?.get(pe);
      path.push(pe);
      const kept = holds(lastChild, false) && !holds(ownedChild, false) ? undefined : pruneRemoved(item, shape.list.items, lastChild, ownedChild, path);
      path.pop();
      if (kept !== item) changed = true;
      if (kept !== undefined) out.push(kept);
    }
    return changed ? out : v;
  }
  return v;
}

/** Whether a set's node at an element holds that element (a named field: anything below it). */
function holds(n: FieldSet | undefined, named: boolean): boolean {
  return n !== undefined && (n.member || (named && n.children !== undefined));
}
