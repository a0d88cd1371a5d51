/**
 * YAML bodies parsed within the server's bounds (issue 16), as two guards around the yaml library:
 *
 * - Depth, while parsing: the library's CST parser keeps an open token per open collection and
 *   needs about 2 KB of memory per level, so a 3 MB body of "[" (1.5 million levels) costs
 *   seconds and more memory than the heap has. The parser is fed one lexeme at a time and
 *   stopped as soon as its stack passes the limit, so refusing costs no more than the limit.
 * - Expansion, before conversion: what the document becomes once its aliases are expanded, measured
 *   on the node tree: an alias costs the expanded size of the node it names, however small its
 *   text. The library's own guard (toJS maxAliasCount) counts nodes times aliases, so 100 aliases
 *   of one 2.9 MB scalar pass it and become 290 MB of JSON on the way out; upstream's YAML decoder
 *   likewise refuses excessive aliasing. The walk is iterative and visits every node once (an
 *   anchored node's measure is reused by its aliases), so it costs what parsing cost. It also
 *   replaces lone UTF-16 surrogates in scalars (a "\ud800" escape) with U+FFFD, as the JSON
 *   decoder does.
 */
import { Composer, isAlias, isMap, isPair, isScalar, isSeq, Lexer, Parser, type CST, type Document, type Node as YamlNode } from 'yaml';
import { scalarSize } from '../patch/json-bounds';

/** Thrown while parsing when the document nests deeper than allowed; offset is where. */
export class YamlTooDeep extends Error {
  constructor(
    readonly maxDepth: number,
    readonly offset: number,
  ) {
    super(`exceeded max depth of ${maxDepth}`);
  }
}

/**
 * The documents of text, as the library's parseAllDocuments gives them (without its line-numbered
 * messages: error positions are in err.pos). Throws YamlTooDeep once more than maxDepth
 * collections are open.
 */
export function parseYamlDocuments(text: string, maxDepth: number): Document.Parsed[] {
  const parser = new Parser();
  const composer = new Composer({ uniqueKeys: false, merge: true });
  return Array.from(composer.compose(depthGuarded(parser, text, maxDepth), true, text.length));
}

/** The parser's tokens, refusing once its stack (the document, open collections and at most one scalar) passes maxDepth + 2. */
function* depthGuarded(parser: Parser, text: string, maxDepth: number): Generator<CST.Token> {
  for (const lexeme of new Lexer().lex(text)) {
    yield* parser.next(lexeme);
    if (parser.stack.length > maxDepth + 2) throw new YamlTooDeep(maxDepth, parser.offset);
  }
  yield* parser.end();
}

/** Why a document was refused, and where (an offset in the text). */
export interface ExpansionProblem {
  message: string;
  offset: number;
}

/** Expanded size (json-bounds measureJson's measure) and nesting depth of a node. */
interface Measure {
  size: number;
  depth: number;
}

interface Frame {
  node: unknown;
  /** Children still to visit were pushed when the frame was entered; this marks the second visit. */
  exiting: boolean;
}

const loneSurrogate = /\p{Cs}/gu;

/**
 * Measures doc with its aliases expanded; answers the first bound it passes (depth counted in
 * mappings and sequences, as JSON counts objects and arrays), or undefined when within both.
 * Scalars with lone surrogates are repaired in place.
 */
export function checkYamlExpansion(doc: Document, maxBytes: number, maxDepth: number): ExpansionProblem | undefined {
  const measured = new Map<unknown, Measure>();
  const anchors = new Map<string, unknown>();
  const open = new Set<unknown>();
  const stack: Frame[] = [{ node: doc.contents, exiting: false }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const node = frame.node;
    if (!frame.exiting) {
      if (isAlias(node)) {
        // The last anchor of that name before the alias in document order, as YAML resolves it.
        const target = anchors.get(node.source);
        if (target === undefined) continue; // toJS reports an unresolved alias
        if (open.has(target)) return { message: `alias *${node.source} refers to a node that contains it`, offset: offsetOf(node) };
        measured.set(node, measured.get(target)!);
        continue;
      }
      const anchor = (node as { anchor?: unknown } | null)?.anchor;
      if (typeof anchor === 'string') anchors.set(anchor, node);
      if (isScalar(node) && typeof node.value === 'string') node.value = node.value.replace(loneSurrogate, '\uFFFD');
      open.add(node);
      stack.push({ node, exiting: true });
      // Children go on the stack in reverse so that they are visited in document order.
      for (const child of childrenOf(node).reverse()) stack.push({ node: child, exiting: false });
      continue;
    }
    open.delete(node);
    const m = measureNode(node, measured);
    measured.set(node, m);
    if (m.size > maxBytes) {
      return { message: `the document is larger than the limit of ${maxBytes} bytes once its aliases are expanded`, offset: offsetOf(node) };
    }
    if (m.depth > maxDepth) return { message: `exceeded max depth of ${maxDepth}`, offset: offsetOf(node) };
  }
  return undefined;
}

/** Keys and values of a mapping, items of a sequence; nothing for scalars. */
function childrenOf(node: unknown): unknown[] {
  if (isMap(node)) {
    const out: unknown[] = [];
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      out.push(pair.key, pair.value);
    }
    return out;
  }
  if (isSeq(node)) return [...node.items];
  return [];
}

/** A node's measure from its children's (all measured: they were visited first). */
function measureNode(node: unknown, measured: Map<unknown, Measure>): Measure {
  const of = (child: unknown): Measure => measured.get(child) ?? { size: 4, depth: 0 }; // an absent value is null
  if (isMap(node)) {
    const pairs = node.items.filter((p) => isPair(p));
    let size = pairs.length > 0 ? pairs.length + 1 : 2;
    let depth = 0;
    for (const pair of pairs) {
      // A key becomes a string: a scalar's text, or a collection's (expanded) rendering.
      const key = of(pair.key);
      const value = of(pair.value);
      size += (isScalar(pair.key) ? String(pair.key.value).length + 2 : key.size) + 1 + value.size;
      depth = Math.max(depth, value.depth);
    }
    return { size, depth: depth + 1 };
  }
  if (isSeq(node)) {
    let size = node.items.length > 0 ? node.items.length + 1 : 2;
    let depth = 0;
    for (const item of node.items) {
      const m = of(item);
      size += m.size;
      depth = Math.max(depth, m.depth);
    }
    return { size, depth: depth + 1 };
  }
  if (isScalar(node)) return { size: scalarSize(node.value), depth: 0 };
  return { size: 4, depth: 0 };
}

function offsetOf(node: unknown): number {
  return (node as YamlNode | null)?.range?.[0] ?? 0;
}
