/**
 * Request-body parsers that, unlike JSON.parse, report duplicate object keys, so that
 * fieldValidation can warn about or reject them. As with Go's decoder (which upstream uses), the
 * last of several values for one key wins. Duplicate paths use the strict decoder's form:
 * `.metadata.name`, `.spec.containers[0].image`; each path is reported once.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, type Document, type Node as YamlNode } from 'yaml';
import { bodyLimitBytes } from '../patch/json-bounds';
import { hasOwn, setOwn, type JsonObject } from '../patch/json-value';
import { checkYamlExpansion, parseYamlDocuments, YamlTooDeep } from './yaml-bounds';

/** A decoded body and the paths of keys that appeared more than once in one object. */
export interface ParsedBody {
  value: unknown;
  duplicates: string[];
}

/** A malformed body: the message names what was wrong and where (1-based line and column). */
export class BodySyntaxError extends SyntaxError {
  constructor(
    message: string,
    /** Offset of the offending character, in UTF-16 code units from the start of the text. */
    readonly offset: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'BodySyntaxError';
  }
}

/** Bounds a parser enforces before handing out a value. */
export interface ParseLimits {
  /** Deepest nesting of objects and arrays (mappings and sequences); deeper input is refused rather than risked. */
  maxDepth: number;
  /** YAML: largest size of the document once its aliases are expanded (yaml-expansion.ts). */
  maxExpandedBytes: number;
}

/**
 * Go's encoding/json nesting limit and the body limit. The server decodes with its own, lower
 * depth (server/decode.ts passes patch/json-bounds.ts maxNestingDepth).
 */
const defaultLimits: ParseLimits = { maxDepth: 10000, maxExpandedBytes: bodyLimitBytes };

/**
 * Parses RFC 8259 JSON text, reporting duplicate keys. Throws BodySyntaxError for malformed
 * input, with Go-like wording ("invalid character '}' looking for beginning of value") plus the
 * position.
 */
export function parseJsonWithDuplicates(text: string, limits: ParseLimits = defaultLimits): ParsedBody {
  return new JsonParser(text, limits.maxDepth).parse();
}

interface ObjectFrame {
  kind: 'object';
  value: JsonObject;
  /** The key whose value is being read. */
  key: string;
}

interface ArrayFrame {
  kind: 'array';
  value: unknown[];
}

/** An iterative parser (explicit stack), so deep nesting cannot overflow the call stack. */
class JsonParser {
  private pos = 0;
  private readonly stack: (ObjectFrame | ArrayFrame)[] = [];
  private readonly duplicates = new Set<string>();

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  parse(): ParsedBody {
    const value = this.parseDocument();
    this.skipWhitespace();
    if (this.pos < this.text.length) this.fail('after top-level value');
    return { value, duplicates: [...this.duplicates] };
  }

  private parseDocument(): unknown {
    for (;;) {
      // Read one value; containers push a frame and continue with their first member.
      this.skipWhitespace();
      let value: unknown;
      const c = this.text[this.pos];
      if (c === '{' || c === '[') this.checkDepth();
      if (c === '{') {
        this.pos++;
        const frame: ObjectFrame = { kind: 'object', value: {}, key: '' };
        this.skipWhitespace();
        if (this.text[this.pos] === '}') {
          this.pos++;
          value = frame.value;
        } else {
          this.stack.push(frame);
          this.readKey(frame);
          continue;
        }
      } else if (c === '[') {
        this.pos++;
        const frame: ArrayFrame = { kind: 'array', value: [] };
        this.skipWhitespace();
        if (this.text[this.pos] === ']') {
          this.pos++;
          value = frame.value;
        } else {
          this.stack.push(frame);
          continue;
        }
      } else {
        value = this.readScalar();
      }

      // Hand the value to its container; close containers that end here.
      for (;;) {
        const top = this.stack[this.stack.length - 1];
        if (!top) return value;
        this.skipWhitespace();
        const next = this.text[this.pos];
        if (top.kind === 'object') {
          setOwn(top.value, top.key, value);
          if (next === ',') {
            this.pos++;
            this.skipWhitespace();
            this.readKey(top);
            break;
          }
          if (next !== '}') this.fail('after object key:value pair');
        } else {
          top.value.push(value);
          if (next === ',') {
            this.pos++;
            break;
          }
          if (next !== ']') this.fail('after array element');
        }
        this.pos++;
        this.stack.pop();
        value = top.value;
      }
    }
  }

  /** Called on an opening bracket: it would be nesting level stack.length + 1. */
  private checkDepth(): void {
    if (this.stack.length + 1 > this.maxDepth) throw this.error(`exceeded max depth of ${this.maxDepth}`, this.pos);
  }

  /**
   * The path of the innermost open container: each enclosing frame contributes the key or index
   * it is reading. Built only when a duplicate is found, to keep the common path cheap.
   */
  private currentPath(): string {
    let path = '';
    for (let i = 0; i < this.stack.length - 1; i++) {
      const f = this.stack[i];
      path += f.kind === 'object' ? `.${f.key}` : `[${f.value.length}]`;
    }
    return path;
  }

  private readKey(frame: ObjectFrame): void {
    if (this.text[this.pos] !== '"') this.fail('looking for beginning of object key string');
    const key = this.readString();
    // Keys already in the object are exactly the keys seen before (values are set as read).
    if (hasOwn(frame.value, key)) this.duplicates.add(`${this.currentPath()}.${key}`);
    this.skipWhitespace();
    if (this.text[this.pos] !== ':') this.fail('after object key');
    this.pos++;
    frame.key = key;
  }

  private readScalar(): unknown {
    const c = this.text[this.pos];
    if (c === '"') return this.readString();
    if (c === '-' || (c >= '0' && c <= '9')) return this.readNumber();
    if (c === 't') return this.readLiteral('true', true);
    if (c === 'f') return this.readLiteral('false', false);
    if (c === 'n') return this.readLiteral('null', null);
    return this.fail('looking for beginning of value');
  }

  private readLiteral(word: string, value: unknown): unknown {
    for (let i = 1; i < word.length; i++) {
      if (this.text[this.pos + i] !== word[i]) {
        this.pos += i;
        this.fail(`in literal ${word} (expecting '${word[i]}')`);
      }
    }
    this.pos += word.length;
    return value;
  }

  private readNumber(): number {
    const t = this.text;
    const start = this.pos;
    const digit = (i: number) => t[i] >= '0' && t[i] <= '9';
    let i = start;
    if (t[i] === '-') i++;
    if (t[i] === '0') i++;
    else if (digit(i)) while (digit(i)) i++;
    else return this.failAt(i, 'in numeric literal');
    if (t[i] === '.') {
      i++;
      if (!digit(i)) return this.failAt(i, 'after decimal point in numeric literal');
      while (digit(i)) i++;
    }
    if (t[i] === 'e' || t[i] === 'E') {
      i++;
      if (t[i] === '+' || t[i] === '-') i++;
      if (!digit(i)) return this.failAt(i, 'in exponent of numeric literal');
      while (digit(i)) i++;
    }
    this.pos = i;
    return Number(t.slice(start, i));
  }

  private readString(): string {
    const t = this.text;
    let i = this.pos + 1;
    let out = '';
    let runStart = i;
    for (;;) {
      if (i >= t.length) {
        this.pos = i;
        return this.fail('in string literal');
      }
      const code = t.charCodeAt(i);
      if (code === 0x22) {
        out += t.slice(runStart, i);
        this.pos = i + 1;
        return out;
      }
      if (code < 0x20) return this.failAt(i, 'in string literal');
      if (code !== 0x5c) {
        i++;
        continue;
      }
      out += t.slice(runStart, i);
      const e = t[i + 1];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          for (let j = i + 2; j < i + 6; j++) {
            if (!/[0-9a-fA-F]/.test(t[j] ?? '')) return this.failAt(j, 'in \\u hexadecimal character escape');
          }
          const unit = parseInt(t.slice(i + 2, i + 6), 16);
          const low = unit >= 0xd800 && unit < 0xdc00 ? lowSurrogateAt(t, i + 6) : undefined;
          if (low !== undefined) {
            out += String.fromCharCode(unit, low);
            i += 6;
          } else {
            // A surrogate escape that is not half of a pair becomes U+FFFD, as Go's decoder makes
            // it: a lone surrogate stored would be re-emitted as "\ud800", which strict parsers refuse.
            out += unit >= 0xd800 && unit < 0xe000 ? '\uFFFD' : String.fromCharCode(unit);
          }
          i += 4;
          break;
        }
        default:
          return this.failAt(i + 1, 'in string escape code');
      }
      i += 2;
      runStart = i;
    }
  }

  private skipWhitespace(): void {
    const t = this.text;
    let i = this.pos;
    while (i < t.length) {
      const c = t.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    this.pos = i;
  }

  private failAt(pos: number, context: string): never {
    this.pos = pos;
    return this.fail(context);
  }

  /** Throws for the character at pos (or the end of input) in the given context. */
  private fail(context: string): never {
    if (this.pos >= this.text.length) throw this.error('unexpected end of JSON input', this.text.length);
    throw this.error(`invalid character ${quoteChar(this.text.codePointAt(this.pos)!)} ${context}`, this.pos);
  }

  private error(message: string, offset: number): BodySyntaxError {
    const { line, column } = lineColumn(this.text, offset);
    return new BodySyntaxError(`${message} at line ${line}, column ${column}`, offset, line, column);
  }
}

/** The low surrogate escaped as \uXXXX at pos in t, if there is one there. */
function lowSurrogateAt(t: string, pos: number): number | undefined {
  if (t[pos] !== '\\' || t[pos + 1] !== 'u') return undefined;
  const hex = t.slice(pos + 2, pos + 6);
  if (!/^[0-9a-fA-F]{4}$/.test(hex)) return undefined;
  const unit = parseInt(hex, 16);
  return unit >= 0xdc00 && unit < 0xe000 ? unit : undefined;
}

function quoteChar(cp: number): string {
  if (cp === 0x27) return "'\\''";
  if (cp < 0x20 || cp === 0x7f) return `'\\x${cp.toString(16).padStart(2, '0')}'`;
  return `'${String.fromCodePoint(cp)}'`;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Parses a single YAML document (YAML 1.2 core schema, `<<` merge keys honoured), reporting
 * duplicate mapping keys. Throws BodySyntaxError for malformed YAML or more than one document;
 * an empty document is null.
 */
export function parseYamlWithDuplicates(text: string, limits: ParseLimits = defaultLimits): ParsedBody {
  let docs: Document.Parsed[];
  try {
    docs = parseYamlDocuments(text, limits.maxDepth);
  } catch (e) {
    if (!(e instanceof YamlTooDeep)) throw e;
    const { line, column } = lineColumn(text, e.offset);
    throw new BodySyntaxError(`yaml: ${e.message} at line ${line}, column ${column}`, e.offset, line, column);
  }
  if (docs.length === 0) return { value: null, duplicates: [] };
  // A trailing "---" with nothing after it is not a second object.
  const extra = docs.slice(1).find((d) => !isEmptyYamlNode(d.contents) || d.errors.length > 0);
  if (extra) {
    const start = extra.contents?.range?.[0] ?? extra.range[0];
    const { line, column } = lineColumn(text, start);
    throw new BodySyntaxError(
      `the body must be a single YAML document, found a second document at line ${line}`,
      start,
      line,
      column,
    );
  }
  const doc = docs[0];
  const err = doc.errors[0];
  if (err) {
    const offset = err.pos[0];
    const { line, column } = lineColumn(text, offset);
    // The yaml library composes nodes recursively and reports its own stack overflow (near 800
    // levels, beyond the server's limit: only a caller with a higher one sees it) as an error.
    const why = /Maximum call stack size exceeded/.test(err.message) ? `exceeded max depth of ${limits.maxDepth}` : err.message.split('\n')[0];
    throw new BodySyntaxError(`yaml: ${why} at line ${line}, column ${column}`, offset, line, column);
  }
  // Before anything walks the nodes recursively or expands an alias.
  const problem = checkYamlExpansion(doc, limits.maxExpandedBytes, limits.maxDepth);
  if (problem) {
    const { line, column } = lineColumn(text, problem.offset);
    throw new BodySyntaxError(`yaml: ${problem.message} at line ${line}, column ${column}`, problem.offset, line, column);
  }
  const duplicates = new Set<string>();
  collectYamlDuplicates(text, doc.contents, '', duplicates);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // toJS refuses alias bombs ("Excessive alias count ...") and other unconvertible input.
    throw new BodySyntaxError(`yaml: ${(e as Error).message}`, 0, 1, 1);
  }
  return { value, duplicates: [...duplicates] };
}

/** Walks the parsed nodes for duplicate keys, and rejects scalars JSON cannot carry (.inf, .nan). */
function collectYamlDuplicates(text: string, node: YamlNode | null | undefined, path: string, out: Set<string>): void {
  if (!node || isAlias(node)) return;
  if (isScalar(node)) {
    if (typeof node.value === 'number' && !Number.isFinite(node.value)) {
      const offset = node.range?.[0] ?? 0;
      const { line, column } = lineColumn(text, offset);
      throw new BodySyntaxError(`yaml: ${path || 'the value'}: ${String(node.source ?? node.value)} cannot be represented in JSON`, offset, line, column);
    }
    return;
  }
  if (isMap(node)) {
    const seen = new Set<string>();
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = yamlKey(pair.key);
      if (key === '<<') continue;
      if (seen.has(key)) out.add(`${path}.${key}`);
      else seen.add(key);
      collectYamlDuplicates(text, pair.value as YamlNode | null, `${path}.${key}`, out);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => collectYamlDuplicates(text, item as YamlNode | null, `${path}[${i}]`, out));
  }
}

/** A document with no content at all (the parser gives it an empty plain scalar). */
function isEmptyYamlNode(n: unknown): boolean {
  return n === null || (isScalar(n) && n.value === null && n.source === '');
}

/** A mapping key as it ends up in the decoded object (toJS turns non-string keys into strings). */
function yamlKey(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  if (key === null || key === undefined) return '';
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a non-scalar key (a yaml node) is printed as String() prints it, as before
  return String(key);
}
