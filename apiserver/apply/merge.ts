import type { Schema } from '../api/schema';
import { isObject } from '../api/types';
import { describePath, fieldElement, type PathElement } from './path-element';
import { fieldSchema, isEmptyValue, keyedItems, shapeOfPair, StructureError, type FieldsShape, type ListShape } from './typed';

/**
 * The applied configuration merged onto the live object (structured-merge-diff's merge with
 * "keep the right-hand side"): where the configuration has a value it wins; a leaf (scalar,
 * atomic value) is replaced whole; granular structs and maps merge key by key; granular lists
 * merge element by element (by key fields or value), the live elements the configuration does
 * not name keeping their places relative to the ones it does. Neither input is changed;
 * unchanged subtrees of the result are shared with them.
 */
export function mergeValues(live: unknown, config: unknown, s: Schema | undefined, path: PathElement[] = []): unknown {
  if (config === undefined) return live;
  if (live === undefined) return config;
  const shape = shapeOfPair(s, live, config);
  if (shape.kind === 'leaf' || (isEmptyValue(live) && isEmptyValue(config))) return config;
  return shape.kind === 'fields' ? mergeFields(live, config, shape, path) : mergeItems(live, config, shape, path);
}

function mergeFields(live: unknown, config: unknown, shape: FieldsShape, path: PathElement[]): Record<string, unknown> {
  const l = isObject(live) ? live : {};
  const c = isObject(config) ? config : {};
  const out: Record<string, unknown> = {};
  for (const [k, lv] of Object.entries(l)) {
    if (lv === undefined) continue;
    const cv = c[k];
    if (cv === undefined) {
      out[k] = lv;
      continue;
    }
    path.push(fieldElement(k));
    out[k] = mergeValues(lv, cv, fieldSchema(shape, k), path);
    path.pop();
  }
  for (const [k, cv] of Object.entries(c)) if (cv !== undefined && l[k] === undefined) out[k] = cv;
  return out;
}

/**
 * Granular list merge. The result walks both lists: an element both have is merged where the
 * configuration puts it, live-only elements stay between the shared ones as they were, and the
 * configuration's new elements come where it has them (upstream's order, which keeps a live
 * list's order when an applier names only some of its elements).
 */
function mergeItems(live: unknown, config: unknown, shape: ListShape, path: PathElement[]): unknown[] {
  const where = () => describePath(path);
  const ls = keyedItems(shape.list, Array.isArray(live) ? live : [], where);
  const rs = keyedItems(shape.list, Array.isArray(config) ? config : [], where);
  const lByPe = new Map<PathElement, unknown>();
  for (const [pe, v] of ls) lByPe.set(pe, lByPe.has(pe) ? undefined : v); // a duplicated live element merges as absent
  const rByPe = new Map<PathElement, unknown>();
  for (const [pe, v] of rs) {
    if (rByPe.has(pe)) throw new StructureError(where(), `duplicate entries for key ${describePath([pe])}`);
    rByPe.set(pe, v);
  }
  const shared = rs.filter(([pe]) => lByPe.has(pe)).map(([pe]) => pe);
  let nextShared = 0;
  const merged = new Set<PathElement>();
  const out: unknown[] = [];
  const emit = (pe: PathElement, l: unknown, r: unknown) => {
    path.push(pe);
    out.push(mergeValues(l, r, shape.list.items, path));
    path.pop();
  };
  let li = 0;
  let ri = 0;
  while (li < ls.length || ri < rs.length) {
    if (li < ls.length && ri < rs.length) {
      const pe = ls[li][0];
      if (pe === rs[ri][0]) {
        merged.add(pe);
        emit(pe, lByPe.get(pe), rByPe.get(pe));
        li++;
        ri++;
        nextShared++;
        continue;
      }
      // A shared element that is not the next one the configuration names waits for its turn.
      if (rByPe.has(pe) && nextShared < shared.length && shared[nextShared] !== pe) {
        li++;
        continue;
      }
    }
    if (li < ls.length) {
      const [pe, lv] = ls[li];
      if (!rByPe.has(pe)) {
        emit(pe, lv, undefined);
        li++;
        continue;
      }
      if (merged.has(pe)) li++;
    }
    if (ri < rs.length) {
      const pe = rs[ri][0];
      merged.add(pe);
      emit(pe, lByPe.get(pe), rByPe.get(pe));
      ri++;
      if (nextShared < shared.length && shared[nextShared] === pe) nextShared++;
    }
  }
  return out;
}
