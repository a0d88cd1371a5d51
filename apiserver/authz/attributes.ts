import { parseFieldTerms, parseLabelSelector } from '../api/selectors';
import type { UserInfo } from '../api/user';
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
 * Selectors that do not parse are left out (the handler answers 400 for them later). Without
 * withSelectors (the AuthorizeWithSelectors gate off) the requirements are not passed on.
 */
export function requestAttributes(user: UserInfo, info: RequestInfo, query: URLSearchParams, withSelectors = true): SelectorAttributes {
  if (!info.isResourceRequest || !['list', 'watch', 'deletecollection'].includes(info.verb)) return { user, info };
  const a: SelectorAttributes = { user, info };
  const fs = parseFieldRequirements(query.get('fieldSelector'));
  const ls = parseLabelRequirements(query.get('labelSelector'));
  if (fs && withSelectors) a.fieldSelector = fs;
  if (ls && withSelectors) a.labelSelector = ls;
  if (!info.name && (info.verb === 'list' || info.verb === 'watch')) {
    const byName = fs?.find((r) => r.key === 'metadata.name' && r.operator === 'In' && r.values.length === 1);
    if (byName) a.info = { ...info, name: byName.values[0] };
  }
  return a;
}

/**
 * `a=b,c!=d` (with `\,` escapes) → requirements; undefined when absent or malformed. The same
 * parser as the list handler's (api/selectors), so what is authorized is what is selected: a
 * looser parse here (trimming, say) could authorize `spec.nodeName= n1` for a node that the handler
 * then reads differently.
 */
export function parseFieldRequirements(text: string | null): SelectorRequirement[] | undefined {
  if (!text) return undefined;
  try {
    return parseFieldTerms(text).map((r) => ({ key: r.key, operator: r.operator === '!=' ? 'NotIn' : 'In', values: [...r.values] }));
  } catch {
    return undefined;
  }
}

/**
 * `a=b,c in (x,y),!d,e` → requirements (the labelSelector grammar of api/selectors); undefined when
 * absent or malformed. `>` and `<` have no SubjectAccessReview operator and are left out: the
 * attributes then describe a wider selection than the request's, never a narrower one.
 */
export function parseLabelRequirements(text: string | null): SelectorRequirement[] | undefined {
  if (!text || !text.trim()) return undefined;
  try {
    return parseLabelSelector(text)
      .filter((r) => r.operator !== 'Gt' && r.operator !== 'Lt')
      .map((r) => ({
        key: r.key,
        operator: r.operator === '=' ? 'In' : r.operator === '!=' ? 'NotIn' : r.operator,
        values: [...r.values],
      }));
  } catch {
    return undefined;
  }
}
