import { ApiError } from './errors';
import { parseInt64 } from './integers';
import { labelValueErrors, qualifiedNameErrors } from './name-validation';

/**
 * Label and field selectors as the labelSelector and fieldSelector query parameters carry them,
 * with upstream's grammars: apimachinery's labels.Parse (a lexer and a recursive-descent parser)
 * and fields.ParseSelector (comma-separated terms with backslash escapes). What upstream accepts
 * parses here to the same requirements; what it refuses is a 400 naming the parameter.
 */

export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | '=' | '!=' | 'Gt' | 'Lt';

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

export type Selector = readonly Requirement[];

/**
 * Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h,i>3`. An empty or blank string selects everything.
 * As upstream: `()` is the set holding the empty value (so `a notin ()` keeps all but `a=""`),
 * empty members of a set are the empty value (`a in (x,)` is x or ""), `>`/`<` compare integers.
 */
export function parseLabelSelector(text: string | null | undefined): Selector {
  if (!text) return [];
  // Upstream's lexer reads a NUL byte as the end of the string and ignores what follows; refusing
  // it is safer than selecting with a silently shortened selector.
  if (text.includes('\0')) throw badLabelSelector(text, 'found a NUL character');
  try {
    return new LabelParser(tokenize(text)).parse();
  } catch (err) {
    if (err instanceof SelectorSyntaxError) throw badLabelSelector(text, err.message);
    throw err;
  }
}

/** Parses `metadata.name=x,spec.nodeName!=y` (only =, == and != exist for fields); `\,` `\=` `\\` escape. */
export function parseFieldSelector(text: string | null | undefined, allowed: ReadonlySet<string>): Selector {
  const out = parseFieldTerms(text);
  for (const r of out) {
    if (!allowed.has(r.key)) throw new ApiError('BadRequest', `field label not supported: ${r.key}`);
  }
  return out;
}

/**
 * The field selector grammar alone (no check of which fields exist), for authorization attributes
 * that must see the same requirements the handler filters by. As upstream's fields.ParseSelector:
 * nothing is trimmed, the first operator in a term splits it, an unescaped `,` or `=` in a value
 * and an unknown escape are errors. The empty string selects everything.
 */
export function parseFieldTerms(text: string | null | undefined): Requirement[] {
  if (!text) return [];
  const out: Requirement[] = [];
  for (const term of splitFieldTerms(text)) {
    if (term === '') continue;
    const m = /^(.*?)(!=|==|=)(.*)$/s.exec(term);
    if (!m) throw new ApiError('BadRequest', `invalid selector: '${text}'; can't understand '${term}'`);
    out.push({ key: m[1], operator: m[2] === '!=' ? '!=' : '=', values: [unescapeFieldValue(m[3])] });
  }
  return out;
}

/** True when every requirement holds for the given key → value lookup (upstream's Requirement.Matches). */
export function matches(sel: Selector, get: (key: string) => string | undefined): boolean {
  return sel.every((r) => requirementHolds(r, get(r.key)));
}

function requirementHolds(r: Requirement, v: string | undefined): boolean {
  switch (r.operator) {
    case '=':
    case 'In':
      return v !== undefined && r.values.includes(v);
    case '!=':
    case 'NotIn':
      return v === undefined || !r.values.includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    case 'Gt':
    case 'Lt': {
      // Both sides are int64 decimals; BigInt compares them exactly where Number would round.
      const have = v === undefined ? undefined : parseInt64(v);
      const want = parseInt64(r.values[0] ?? '');
      if (have === undefined || want === undefined) return false;
      return r.operator === 'Gt' ? have > want : have < want;
    }
  }
}

// ---- the label selector lexer and parser ----

type TokenKind = 'id' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<' | 'end';

interface Token {
  kind: TokenKind;
  text: string;
}

const WHITESPACE = new Set([' ', '\t', '\r', '\n']);
const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);

/** Splits into upstream's tokens: runs of special symbols are read longest-first (`!=`, `==`), anything else up to whitespace or a symbol is a word. */
function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < text.length && WHITESPACE.has(text[i])) i++;
    if (i >= text.length) {
      out.push({ kind: 'end', text: '' });
      return out;
    }
    if (SPECIAL.has(text[i])) {
      const two = text.slice(i, i + 2);
      const kind = (two === '!=' || two === '==' ? two : text[i]) as TokenKind;
      out.push({ kind, text: kind });
      i += kind.length;
      continue;
    }
    let j = i;
    while (j < text.length && !WHITESPACE.has(text[j]) && !SPECIAL.has(text[j])) j++;
    const word = text.slice(i, j);
    out.push({ kind: word === 'in' || word === 'notin' ? word : 'id', text: word });
    i = j;
  }
}

class SelectorSyntaxError extends Error {}

/** Errors inside one requirement carry upstream's prefix. */
const inRequirement = (why: string) => new SelectorSyntaxError(`unable to parse requirement: ${why}`);

/** Upstream's operator list as its "expected" messages print it. */
const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

class LabelParser {
  private pos = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  parse(): Requirement[] {
    const out: Requirement[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'end') return out;
      if (t.kind !== 'id' && t.kind !== '!') throw new SelectorSyntaxError(`found '${t.text}', expected: !, identifier, or 'end of string'`);
      out.push(this.requirement());
      const after = this.next();
      if (after.kind === 'end') return out;
      if (after.kind !== ',') throw new SelectorSyntaxError(`found '${after.text}', expected: ',' or 'end of string'`);
      const t2 = this.peek();
      if (t2.kind !== 'id' && t2.kind !== '!') throw new SelectorSyntaxError(`found '${t2.text}', expected: identifier after ','`);
    }
  }

  /**
   * The next token without consuming it. Where a key or value is expected the words in and notin
   * are plain identifiers (upstream's Values context): `in in (notin)` is a valid requirement.
   */
  private peek(asOperator = false): Token {
    const t = this.tokens[Math.min(this.pos, this.tokens.length - 1)];
    return !asOperator && (t.kind === 'in' || t.kind === 'notin') ? { kind: 'id', text: t.text } : t;
  }

  private next(asOperator = false): Token {
    const t = this.peek(asOperator);
    this.pos++;
    return t;
  }

  private requirement(): Requirement {
    let t = this.next();
    const negated = t.kind === '!';
    if (negated) t = this.next();
    if (t.kind !== 'id') throw inRequirement(`found '${t.text}', expected: identifier`);
    const key = t.text;
    const keyErrors = qualifiedNameErrors(key);
    if (keyErrors.length > 0) throw inRequirement(`key: Invalid value: ${JSON.stringify(key)}: ${keyErrors.join('; ')}`);
    // `!key` is complete on its own; whatever follows is the caller's to refuse (`!a=b` is an error).
    if (negated) return { key, operator: 'DoesNotExist', values: [] };
    const la = this.peek();
    if (la.kind === 'end' || la.kind === ',') return { key, operator: 'Exists', values: [] };
    const op = this.next(true);
    let operator: Operator;
    let values: string[];
    switch (op.kind) {
      case 'in':
      case 'notin':
        operator = op.kind === 'in' ? 'In' : 'NotIn';
        values = this.valueSet();
        break;
      case '=':
      case '==':
      case '!=':
      case '>':
      case '<':
        operator = op.kind === '!=' ? '!=' : op.kind === '>' ? 'Gt' : op.kind === '<' ? 'Lt' : '=';
        values = [this.exactValue()];
        break;
      default:
        throw inRequirement(`found '${op.text}', expected: ${BINARY_OPERATORS}`);
    }
    checkValues(key, operator, values);
    return { key, operator, values };
  }

  /** `(a,b)`; `()` and empty members stand for the empty value. Sorted and de-duplicated, as upstream's string set. */
  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') throw inRequirement(`found '${open.text}' expected: '('`);
    const first = this.peek();
    if (first.kind === ')') {
      this.next();
      return [''];
    }
    if (first.kind !== 'id' && first.kind !== ',') throw inRequirement(`found '${first.text}', expected: ',', ')' or identifier`);
    const values = new Set<string>();
    for (let done = false; !done; ) {
      const t = this.next();
      if (t.kind === 'id') {
        values.add(t.text);
        const t2 = this.peek();
        if (t2.kind === ')') done = true;
        else if (t2.kind !== ',') throw inRequirement(`found '${t2.text}', expected: ',' or ')'`);
      } else if (t.kind === ',') {
        // A comma first, last or doubled stands next to an empty member.
        if (values.size === 0) values.add('');
        const t2 = this.peek();
        if (t2.kind === ')') {
          values.add('');
          done = true;
        } else if (t2.kind === ',') {
          this.next();
          values.add('');
        }
      } else {
        throw inRequirement(`found '${t.text}', expected: ',', or identifier`);
      }
    }
    this.next(); // the ')' seen above
    return [...values].sort();
  }

  /** The one value after =, ==, !=, > or <; nothing (end or a comma) is the empty value. */
  private exactValue(): string {
    const la = this.peek();
    if (la.kind === 'end' || la.kind === ',') return '';
    const t = this.next();
    if (t.kind !== 'id') throw inRequirement(`found '${t.text}', expected: identifier`);
    return t.text;
  }
}

/** Upstream's NewRequirement checks: integers for Gt and Lt, every value a valid label value. */
function checkValues(key: string, operator: Operator, values: readonly string[]): void {
  const problems: string[] = [];
  if ((operator === 'Gt' || operator === 'Lt') && parseInt64(values[0]) === undefined) {
    problems.push(`values[0]: Invalid value: ${JSON.stringify(values[0])}: for 'Gt', 'Lt' operators, the value must be an integer`);
  }
  values.forEach((v, i) => {
    const errs = labelValueErrors(v);
    if (errs.length > 0) problems.push(`values[${i}][${key}]: Invalid value: ${JSON.stringify(v)}: ${errs.join('; ')}`);
  });
  if (problems.length === 1) throw inRequirement(problems[0]);
  if (problems.length > 1) throw inRequirement(`[${problems.join(', ')}]`);
}

function badLabelSelector(text: string, why: string): ApiError {
  return new ApiError('BadRequest', `labelSelector: Invalid value: ${JSON.stringify(text)}: ${why}`);
}

// ---- field selector terms ----

/** Splits on unescaped commas, keeping escapes in the terms (unescaped later, per value). */
function splitFieldTerms(text: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

/** Upstream's UnescapeValue: `\\`, `\,` and `\=` are the only escapes; a bare `,` or `=` is an error. */
function unescapeFieldValue(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      const n = s[i + 1];
      if (n === undefined) throw new ApiError('BadRequest', 'invalid field selector: invalid escape sequence: \\');
      if (n !== '\\' && n !== ',' && n !== '=') throw new ApiError('BadRequest', `invalid field selector: invalid escape sequence: \\${n}`);
      out += n;
      i++;
    } else if (c === ',' || c === '=') {
      throw new ApiError('BadRequest', `invalid field selector: unescaped character in value: ${c}`);
    } else {
      out += c;
    }
  }
  return out;
}
