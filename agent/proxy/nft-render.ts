/**
 * nft script text for a sync, applied by `nft -f -` as one transaction (the kernel applies all of
 * it or nothing):
 *
 * - full: `add table` then `delete table` then the whole table again, so whatever a previous run
 *   (or anyone) left in our table is replaced in the same transaction (upstream flushes its table
 *   the same way at start).
 * - incremental (upstream's partial syncs): only what differs from the table last applied: new
 *   chains and sets, changed chains flushed and refilled, map and set elements added and deleted,
 *   chains and sets no longer used deleted last. Dynamic sets (session affinity) keep their
 *   kernel-filled elements. A change this cannot express in place (a set's declaration, a base
 *   chain's hook) answers undefined: the caller syncs in full.
 */
import { TABLE_NAME, type NftChain, type NftSet, type NftTable } from './nft-model';

const at = (t: NftTable) => `${t.family} ${TABLE_NAME}`;

function addChain(t: NftTable, name: string, c: NftChain): string {
  return `add chain ${at(t)} ${name}${c.base ? ` { ${c.base} }` : ''}`;
}

function addRules(t: NftTable, name: string, c: NftChain, out: string[]): void {
  for (const r of c.rules) out.push(`add rule ${at(t)} ${name} ${r}`);
}

function elements(m: Map<string, string> | Iterable<[string, string]>): string {
  const parts: string[] = [];
  for (const [k, v] of m) parts.push(v ? `${k} : ${v}` : k);
  return parts.join(', ');
}

function addElements(t: NftTable, name: string, els: Map<string, string>, out: string[]): void {
  if (els.size > 0) out.push(`add element ${at(t)} ${name} { ${elements(els)} }`);
}

const addSet = (t: NftTable, name: string, s: NftSet) => `add ${s.kind} ${at(t)} ${name} { ${s.spec} }`;

/** The table, replacing whatever table of ours is there. */
export function renderFull(t: NftTable): string {
  const out = [`add table ${at(t)}`, `delete table ${at(t)}`, `add table ${at(t)}`];
  for (const [name, c] of t.chains) out.push(addChain(t, name, c));
  for (const [name, s] of t.sets) out.push(addSet(t, name, s));
  for (const [name, s] of t.sets) addElements(t, name, s.elements, out);
  for (const [name, c] of t.chains) addRules(t, name, c, out);
  return out.join('\n') + '\n';
}

/** Removes our table (the clean shutdown); `add` first so that removing an absent table is not an error. */
export function renderDelete(family: NftTable['family']): string {
  return `add table ${family} ${TABLE_NAME}\ndelete table ${family} ${TABLE_NAME}\n`;
}

const sameRules = (a: NftChain, b: NftChain) => a === b || (a.rules.length === b.rules.length && a.rules.every((r, i) => r === b.rules[i]));

/**
 * What turns `prev` (the table last applied) into `next`; '' when nothing differs, undefined when
 * only a full sync can do it.
 */
export function renderDiff(prev: NftTable, next: NftTable): string | undefined {
  if (prev.family !== next.family) return undefined;
  for (const [name, s] of next.sets) {
    const old = prev.sets.get(name);
    if (old && (old.kind !== s.kind || old.spec !== s.spec)) return undefined;
  }
  for (const [name, c] of next.chains) {
    const old = prev.chains.get(name);
    if (old && old.base !== c.base) return undefined;
  }
  const newChains: string[] = [];
  const flushes: string[] = [];
  const rules: string[] = [];
  const deletes: string[] = [];
  for (const [name, c] of next.chains) {
    const old = prev.chains.get(name);
    if (!old) {
      newChains.push(addChain(next, name, c));
      addRules(next, name, c, rules);
    } else if (!sameRules(old, c)) {
      flushes.push(`flush chain ${at(next)} ${name}`);
      addRules(next, name, c, rules);
    }
  }
  for (const [name, c] of prev.chains) {
    if (next.chains.has(name)) continue;
    if (c.rules.length > 0) flushes.push(`flush chain ${at(prev)} ${name}`);
    deletes.push(`delete chain ${at(prev)} ${name}`);
  }
  const { newSets, removedEls, addedEls } = diffSets(prev, next);
  for (const [name, s] of prev.sets) if (!next.sets.has(name)) deletes.push(`delete ${s.kind} ${at(prev)} ${name}`);
  const out = [...newChains, ...newSets, ...flushes, ...removedEls, ...addedEls, ...rules, ...deletes];
  return out.length === 0 ? '' : out.join('\n') + '\n';
}

function diffSets(prev: NftTable, next: NftTable): { newSets: string[]; removedEls: string[]; addedEls: string[] } {
  const newSets: string[] = [];
  const removedEls: string[] = [];
  const addedEls: string[] = [];
  for (const [name, s] of next.sets) {
    const old = prev.sets.get(name);
    if (!old) {
      newSets.push(addSet(next, name, s));
      addElements(next, name, s.elements, addedEls);
      continue;
    }
    if (s.dynamic) continue;
    const gone: string[] = [];
    const added = new Map<string, string>();
    for (const [k, v] of old.elements) {
      const nv = s.elements.get(k);
      if (nv === undefined || nv !== v) gone.push(k);
    }
    for (const [k, v] of s.elements) if (old.elements.get(k) !== v) added.set(k, v);
    if (gone.length > 0) removedEls.push(`delete element ${at(next)} ${name} { ${gone.join(', ')} }`);
    addElements(next, name, added, addedEls);
  }
  return { newSets, removedEls, addedEls };
}
