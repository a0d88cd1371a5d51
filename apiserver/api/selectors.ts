import { ApiError } from './errors';

/**
 * Label and field selectors as the labelSelector and fieldSelector query parameters carry them
 * (upstream's apimachinery labels.Parse and fields.ParseSelector grammars).
 */

export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | '=' | '!=';

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

export type Selector = readonly Requirement[];

/** Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`. Empty string selects everything. Bad syntax → 400. */
export function parseLabelSelector(text: string | null | undefined): Selector {
  if (!text || !text.trim()) return [];
  const out: Requirement[] = [];
  for (const part of splitTop(text)) {
    const p = part.trim();
    if (!p) throw bad('label', text, 'empty requirement');
    let m: RegExpMatchArray | null;
    if ((m = p.match(/^([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)$/))) {
      const values = m[3].split(',').map((v) => v.trim());
      if (values.some((v) => !isLabelValueLike(v))) throw bad('label', text, `invalid value in ${p}`);
      out.push({ key: checkKey(m[1], text), operator: m[2] === 'in' ? 'In' : 'NotIn', values });
    } else if ((m = p.match(/^!\s*([^\s!=(),]+)$/))) {
      out.push({ key: checkKey(m[1], text), operator: 'DoesNotExist', values: [] });
    } else if ((m = p.match(/^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/))) {
      if (!isLabelValueLike(m[3])) throw bad('label', text, `invalid value "${m[3]}"`);
      out.push({ key: checkKey(m[1], text), operator: m[2] === '!=' ? '!=' : '=', values: [m[3]] });
    } else if ((m = p.match(/^([^\s!=(),]+)$/))) {
      out.push({ key: checkKey(m[1], text), operator: 'Exists', values: [] });
    } else {
      throw bad('label', text, `unable to parse requirement "${p}"`);
    }
  }
  return out;
}

/** Parses `metadata.name=x,spec.nodeName!=y` (only =, == and != exist for fields); `\,` escapes. */
export function parseFieldSelector(text: string | null | undefined, allowed: ReadonlySet<string>): Selector {
  if (!text || !text.trim()) return [];
  const out: Requirement[] = [];
  for (const part of splitEscaped(text)) {
    const m = part.match(/^([^=!]+?)\s*(==|=|!=)\s*(.*)$/s);
    if (!m) throw bad('field', text, `invalid selector: '${part}'; can't understand '${part}'`);
    const key = m[1].trim();
    if (!allowed.has(key)) throw new ApiError('BadRequest', `field label not supported: ${key}`);
    out.push({ key, operator: m[2] === '!=' ? '!=' : '=', values: [unescape(m[3])] });
  }
  return out;
}

/** True when every requirement holds for the given key → value lookup. */
export function matches(sel: Selector, get: (key: string) => string | undefined): boolean {
  for (const r of sel) {
    const v = get(r.key);
    switch (r.operator) {
      case '=':
        if (v !== r.values[0]) return false;
        break;
      case '!=':
        if (v === r.values[0]) return false;
        break;
      case 'In':
        if (v === undefined || !r.values.includes(v)) return false;
        break;
      case 'NotIn':
        if (v !== undefined && r.values.includes(v)) return false;
        break;
      case 'Exists':
        if (v === undefined) return false;
        break;
      case 'DoesNotExist':
        if (v !== undefined) return false;
        break;
    }
  }
  return true;
}

function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts;
}

function splitEscaped(text: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\' && i + 1 < text.length) {
      cur += text[i] + text[i + 1];
      i++;
    } else if (text[i] === ',') {
      parts.push(cur);
      cur = '';
    } else cur += text[i];
  }
  parts.push(cur);
  return parts.filter((p) => p.trim() !== '');
}

function unescape(v: string): string {
  return v.replace(/\\(.)/g, '$1');
}

function checkKey(key: string, text: string): string {
  // Qualified name with an optional DNS prefix, as label keys are validated on write.
  if (!/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(key) || key.length > 316) {
    throw bad('label', text, `invalid label key "${key}"`);
  }
  return key;
}

function isLabelValueLike(v: string): boolean {
  return v === '' || (/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(v) && v.length <= 63);
}

function bad(kind: 'label' | 'field', text: string, why: string): ApiError {
  return new ApiError('BadRequest', `unable to parse requirement: invalid ${kind} selector "${text}": ${why}`);
}
