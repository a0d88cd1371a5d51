import { compareElements, type PathElement } from './path-element';

/**
 * A set of field paths (structured-merge-diff's fieldpath.Set), as a tree: each node is one path,
 * `member` when the path itself is in the set, `children` leading to longer paths. Every node
 * below the root is non-empty. Sets are immutable: the operations build new nodes only where
 * the result differs and return an operand itself when it is the answer, so the work of a write
 * stays proportional to what the operands hold (paths are never flattened to strings: a deep
 * object would cost leaves × depth), and an entry whose set an operation left alone keeps its
 * stored FieldsV1 (see managers.ts).
 */
export interface FieldSet {
  readonly member: boolean;
  readonly children?: ReadonlyMap<PathElement, FieldSet>;
}

/** The empty set. */
export const EMPTY: FieldSet = Object.freeze({ member: false });
/** A set holding only the path it is placed at (a leaf). */
export const LEAF: FieldSet = Object.freeze({ member: true });

export function isEmpty(s: FieldSet): boolean {
  return !s.member && (s.children === undefined || s.children.size === 0);
}

/** A node from its parts; children may be empty (then it is a leaf or the empty set). */
export function makeNode(member: boolean, children: Map<PathElement, FieldSet> | undefined): FieldSet {
  if (children === undefined || children.size === 0) return member ? LEAF : EMPTY;
  return { member, children };
}

export function child(s: FieldSet, pe: PathElement): FieldSet | undefined {
  return s.children?.get(pe);
}

export function has(s: FieldSet, path: readonly PathElement[]): boolean {
  let n: FieldSet | undefined = s;
  for (const pe of path) {
    n = n.children?.get(pe);
    if (!n) return false;
  }
  return n.member && path.length > 0;
}

export function union(a: FieldSet, b: FieldSet): FieldSet {
  if (a === b || isEmpty(b)) return a;
  if (isEmpty(a)) return b;
  const member = a.member || b.member;
  if (!b.children) return member === a.member ? a : makeNode(member, a.children && new Map(a.children));
  if (!a.children) return member === b.member ? b : makeNode(member, new Map(b.children));
  const out = new Map(a.children);
  for (const [pe, bc] of b.children) {
    const ac = out.get(pe);
    out.set(pe, ac ? union(ac, bc) : bc);
  }
  return makeNode(member, out);
}

export function intersection(a: FieldSet, b: FieldSet): FieldSet {
  if (a === b) return a;
  const member = a.member && b.member;
  if (!a.children || !b.children) return member ? LEAF : EMPTY;
  const [small, large] = a.children.size <= b.children.size ? [a.children, b.children] : [b.children, a.children];
  let out: Map<PathElement, FieldSet> | undefined;
  for (const [pe, sc] of small) {
    const lc = large.get(pe);
    if (!lc) continue;
    const i = intersection(sc, lc);
    if (!isEmpty(i)) (out ??= new Map()).set(pe, i);
  }
  return makeNode(member, out);
}

/** a without the paths of b (only those paths: what lies below them in a stays). */
export function difference(a: FieldSet, b: FieldSet): FieldSet {
  if (isEmpty(b) || isEmpty(a)) return a;
  if (a === b) return EMPTY;
  const member = a.member && !b.member;
  if (!a.children || !b.children) return member === a.member ? a : makeNode(member, a.children && new Map(a.children));
  let out: Map<PathElement, FieldSet> | undefined;
  for (const [pe, bc] of b.children) {
    const ac = (out ?? a.children).get(pe);
    if (!ac) continue;
    const d = difference(ac, bc);
    if (d === ac) continue;
    out ??= new Map(a.children);
    if (isEmpty(d)) out.delete(pe);
    else out.set(pe, d);
  }
  if (!out && member === a.member) return a;
  return makeNode(member, out ?? new Map(a.children));
}

/** a without the paths of b and without everything below b's paths (fieldpath's RecursiveDifference). */
export function recursiveDifference(a: FieldSet, b: FieldSet): FieldSet {
  if (isEmpty(b) || isEmpty(a)) return a;
  const member = a.member && !b.member;
  if (!a.children || !b.children) return member === a.member ? a : makeNode(member, a.children && new Map(a.children));
  let out: Map<PathElement, FieldSet> | undefined;
  for (const [pe, bc] of b.children) {
    const ac = (out ?? a.children).get(pe);
    if (!ac) continue;
    const d = bc.member ? EMPTY : recursiveDifference(ac, bc);
    if (d === ac) continue;
    out ??= new Map(a.children);
    if (isEmpty(d)) out.delete(pe);
    else out.set(pe, d);
  }
  if (!out && member === a.member) return a;
  return makeNode(member, out ?? new Map(a.children));
}

/**
 * The paths of s at or below the paths of `only` (upstream's include filter of prefix matchers):
 * a member of `only` keeps everything of s below it; the paths leading to it are not kept themselves.
 */
export function within(s: FieldSet, only: FieldSet): FieldSet {
  if (!s.children || !only.children) return EMPTY;
  let out: Map<PathElement, FieldSet> | undefined;
  for (const [pe, oc] of only.children) {
    const sc = s.children.get(pe);
    if (!sc) continue;
    const kept = oc.member ? sc : within(sc, oc);
    if (!isEmpty(kept)) (out ??= new Map()).set(pe, kept);
  }
  return makeNode(false, out);
}

/** The children of s in upstream's element order. */
export function sortedChildren(s: FieldSet): Array<[PathElement, FieldSet]> {
  if (!s.children) return [];
  const all = [...s.children];
  // Field names (nearly every element) sort as plain strings and before everything else; only
  // keys and values need compareElements, which reads their JSON.
  if (all.every(([pe]) => pe.charCodeAt(0) === 0x66)) return all.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  return all.sort((x, y) => compareElements(x[0], y[0]));
}

/**
 * Calls f with every path of s in upstream's iteration order (fieldpath.Set.Iterate): at each
 * level the member elements first, then the paths below each child, both in element order.
 */
export function forEachPath(s: FieldSet, f: (path: readonly PathElement[]) => void, prefix: PathElement[] = []): void {
  const sorted = sortedChildren(s);
  for (const [pe, c] of sorted) if (c.member) f([...prefix, pe]);
  for (const [pe, c] of sorted) {
    if (!c.children) continue;
    prefix.push(pe);
    forEachPath(c, f, prefix);
    prefix.pop();
  }
}

/** A set of the given paths (tests and the fixed sets of the field manager). */
export function setOf(paths: ReadonlyArray<readonly PathElement[]>): FieldSet {
  let s: FieldSet = EMPTY;
  for (const p of paths) {
    let n: FieldSet = LEAF;
    for (let i = p.length - 1; i >= 0; i--) n = makeNode(false, new Map([[p[i], n]]));
    s = union(s, n);
  }
  return s;
}
