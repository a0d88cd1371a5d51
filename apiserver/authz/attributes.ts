import type { UserInfo } from '../authn/user';
import type { RequestInfo } from '../server/request-info';
import type { Attributes } from './authorizer';

/** A selector requirement as SubjectAccessReview carries it (operators In, NotIn, Exists, DoesNotExist). */
export interface SelectorRequirement {
  key: string;
  operator: string;
  values: string[];
}

/**
 * A.1 attributes with the field and label selector requirements of a list, watch or
 * deletecollection (upstream AuthorizeWithSelectors). The Node authorizer needs the field
 * selector (a node lists only pods with spec.nodeName=<itself>); webhooks and CEL get both.
 */
export interface SelectorAttributes extends Attributes {
  fieldSelector?: SelectorRequirement[];
  labelSelector?: SelectorRequirement[];
}

export function fieldSelectorOf(a: Attributes): SelectorRequirement[] {
  return (a as SelectorAttributes).fieldSelector ?? [];
}

export function labelSelectorOf(a: Attributes): SelectorRequirement[] {
  return (a as SelectorAttributes).labelSelector ?? [];
}

/** True when the field selector pins key to exactly value (key=value, or In with that single value). */
export function fieldSelectorPins(a: Attributes, key: string, value: string): boolean {
  return fieldSelectorOf(a).some((r) => r.key === key && r.operator === 'In' && r.values.length === 1 && r.values[0] === value);
}

/**
 * The attributes of an HTTP request, for the router to authorize with: for list, watch and
 * deletecollection the fieldSelector and labelSelector query parameters become requirements, and
 * a `metadata.name=x` field selector names the object, as upstream's RequestInfoFactory does (so
 * a rule with resourceNames, or a node reading one secret, can allow a watch of that one object).
 * Selectors that do not parse are left out (the handler answers 400 for them later).
 */
export function requestAttributes(user: UserInfo, info: RequestInfo, query: URLSearchParams): SelectorAttributes {
  if (!info.isResourceRequest || !['list', 'watch', 'deletecollection'].includes(info.verb)) return { user, info };
  const a: SelectorAttributes = { user, info };
  const fs = parseFieldRequirements(query.get('fieldSelector'));
  const ls = parseLabelRequirements(query.get('labelSelector'));
  if (fs) a.fieldSelector = fs;
  if (ls) a.labelSelector = ls;
  if (!info.name && (info.verb === 'list' || info.verb === 'watch')) {
    const byName = fs?.find((r) => r.key === 'metadata.name' && r.operator === 'In' && r.values.length === 1);
    if (byName) a.info = { ...info, name: byName.values[0] };
  }
  return a;
}

/** `a=b,c!=d` (with `\,` escapes) → requirements; undefined when absent or malformed. */
export function parseFieldRequirements(text: string | null): SelectorRequirement[] | undefined {
  if (!text || !text.trim()) return undefined;
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\' && i + 1 < text.length) cur += text[++i];
    else if (text[i] === ',') {
      parts.push(cur);
      cur = '';
    } else cur += text[i];
  }
  parts.push(cur);
  const out: SelectorRequirement[] = [];
  for (const p of parts) {
    if (!p.trim()) continue;
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/s.exec(p);
    if (!m) return undefined;
    out.push({ key: m[1].trim(), operator: m[2] === '!=' ? 'NotIn' : 'In', values: [m[3].trim()] });
  }
  return out;
}

/** `a=b,c in (x,y),!d,e` → requirements; undefined when absent or malformed. */
export function parseLabelRequirements(text: string | null): SelectorRequirement[] | undefined {
  if (!text || !text.trim()) return undefined;
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
  const out: SelectorRequirement[] = [];
  for (const raw of parts) {
    const p = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(p))) out.push({ key: m[1], operator: m[2] === 'in' ? 'In' : 'NotIn', values: m[3].split(',').map((v) => v.trim()) });
    else if ((m = /^!\s*(\S+)$/.exec(p))) out.push({ key: m[1], operator: 'DoesNotExist', values: [] });
    else if ((m = /^([^\s!=]+)\s*(==|=|!=)\s*(\S*)$/.exec(p))) out.push({ key: m[1], operator: m[2] === '!=' ? 'NotIn' : 'In', values: [m[3]] });
    else if ((m = /^([^\s!=(),]+)$/.exec(p))) out.push({ key: m[1], operator: 'Exists', values: [] });
    else return undefined;
  }
  return out;
}
