import type { Schema } from '../api/schema';
import { LEAF, makeNode, type FieldSet } from './field-set';
import type { PathElement } from './path-element';
import { fieldSchema, isAtomicContainer, schemaShape } from './typed';

/**
 * A manager's set made to fit the schema as it is now (structured-merge-diff's
 * ReconcileFieldSetWithSchema, spec section 9 and Appendix C): where a type became atomic, the
 * manager that owned parts of the value owns the whole value instead. The reverse (atomic to
 * granular) needs nothing: the owner of the whole keeps only the value itself, and nobody owns
 * its parts until someone writes them (upstream: not recommended). Untyped places are left
 * alone. Returns s itself when nothing changes.
 */
export function reconcileWithSchema(s: FieldSet, schema: Schema | undefined): FieldSet {
  if (!s.children) return s;
  if (isAtomicContainer(schema)) return LEAF;
  const shape = schemaShape(schema);
  if (shape.kind === 'leaf') return s;
  let out: Map<PathElement, FieldSet> | undefined;
  for (const [pe, c] of s.children) {
    let cs: Schema | undefined;
    if (shape.kind === 'fields') {
      // Untyped objects (no schema, `any`) and unknown fields are not reconciled (upstream: deduced types).
      if (pe[0] !== 'f' || (!shape.struct && !shape.values)) continue;
      cs = fieldSchema(shape, pe.slice(2));
      if (cs === undefined) continue;
    } else {
      if (pe[0] !== 'k' && pe[0] !== 'v') continue;
      cs = shape.list.items;
    }
    const r = reconcileWithSchema(c, cs);
    if (r === c) continue;
    out ??= new Map(s.children);
    out.set(pe, r);
  }
  return out ? makeNode(s.member, out) : s;
}
