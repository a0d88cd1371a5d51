import type { Cause } from '../../api/errors';
import { dns1123SubdomainErrors, portNumErrors } from '../../api/name-validation';
import { messages, qualifiedName } from '../common-validation';
import { child, duplicate, index, invalid, notSupported, required, tooMany } from '../field-errors';
import { rec, recs, str, strs } from '../obj-access';

/**
 * Upstream's admissionregistration validation pieces (pkg/apis/admissionregistration/validation)
 * shared by webhook configurations and admission policies: rules, match conditions, the webhook
 * client configuration; messages as upstream's.
 */

export const OPERATIONS: readonly string[] = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
export const SCOPES: readonly string[] = ['*', 'Cluster', 'Namespaced'];
export const FAILURE_POLICIES: readonly string[] = ['Fail', 'Ignore'];
export const MATCH_POLICIES: readonly string[] = ['Equivalent', 'Exact'];
/** Upstream's AdmissionReview versions the API server speaks, preferred first. */
export const REVIEW_VERSIONS: readonly string[] = ['v1', 'v1beta1'];
const MAX_MATCH_CONDITIONS = 64;

function wildcardAlone(path: string, values: string[], what: string): Cause[] {
  return values.length > 1 && values.includes('*') ? [invalid(path, values, `if '*' is present, must not specify other ${what}`)] : [];
}

/** Upstream validateResources: the overlap rules of the wildcard forms (all, all with sub-resources, every sub-resource of one). */
function validateResources(path: string, resources: string[]): Cause[] {
  const out: Cause[] = [];
  if (resources.length === 0) return [required(path, '')];
  const all = new Set(resources);
  const subWildcard = new Set<string>();
  const resWildcard = new Set<string>();
  for (const r of resources) {
    const [res, sub] = r.split('/', 2);
    if (sub === '*') subWildcard.add(res);
    if (res === '*') resWildcard.add(sub ?? '');
  }
  if (all.has('*/*') && resources.length > 1) out.push(invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  resources.forEach((r, i) => {
    if (r === '') {
      out.push(required(index(path, i), ''));
      return;
    }
    if (r === '*/*') return;
    const [res, sub] = r.split('/', 2);
    if (sub !== undefined && sub !== '*' && subWildcard.has(res)) out.push(invalid(index(path, i), r, `if '${res}/*' is present, must not specify ${r}`));
    if (res !== '*' && resWildcard.has(sub ?? '')) out.push(invalid(index(path, i), r, `if '${sub === undefined ? '*' : `*/${sub}`}' is present, must not specify ${r}`));
  });
  return out;
}

/** Upstream validateRuleWithOperations (allowSubResources: true). */
export function validateRule(path: string, ruleValue: unknown): Cause[] {
  const rule = rec(ruleValue) ?? {};
  const out: Cause[] = [];
  const ops = strs(rule.operations);
  if (ops.length === 0) out.push(required(child(path, 'operations'), ''));
  out.push(...wildcardAlone(child(path, 'operations'), ops, 'operations'));
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) out.push(notSupported(index(child(path, 'operations'), i), op, OPERATIONS));
  });
  const groups = strs(rule.apiGroups);
  if (groups.length === 0) out.push(required(child(path, 'apiGroups'), ''));
  out.push(...wildcardAlone(child(path, 'apiGroups'), groups, 'API groups'));
  const versions = strs(rule.apiVersions);
  if (versions.length === 0) out.push(required(child(path, 'apiVersions'), ''));
  out.push(...wildcardAlone(child(path, 'apiVersions'), versions, 'API versions'));
  versions.forEach((v, i) => {
    if (v === '') out.push(required(index(child(path, 'apiVersions'), i), ''));
  });
  out.push(...validateResources(child(path, 'resources'), strs(rule.resources)));
  if (rule.scope !== undefined && rule.scope !== null && !SCOPES.includes(str(rule.scope) ?? '')) out.push(notSupported(child(path, 'scope'), rule.scope, SCOPES));
  return out;
}

/** Upstream validateMatchConditions: names qualified and unique, expressions present (compiled by the caller). */
export function validateMatchConditions(path: string, list: unknown, compile?: (expr: string) => string | undefined): Cause[] {
  const conditions = recs(list);
  const out: Cause[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS) out.push(tooMany(path, conditions.length, MAX_MATCH_CONDITIONS));
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const p = index(path, i);
    const name = str(c.name) ?? '';
    if (name === '') out.push(required(child(p, 'name'), ''));
    else out.push(...qualifiedName(child(p, 'name'), name));
    if (seen.has(name) && name !== '') out.push(duplicate(child(p, 'name'), name));
    seen.add(name);
    const expr = str(c.expression) ?? '';
    if (expr === '') out.push(required(child(p, 'expression'), ''));
    else {
      const err = compile?.(expr);
      if (err) out.push(invalid(child(p, 'expression'), expr, err));
    }
  });
  return out;
}

/** Upstream ValidateWebhookURL with forceHttps. */
export function validateWebhookUrl(path: string, url: string): Cause[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch (err) {
    return [invalid(path, url, `url must be a valid URL: ${(err as Error).message}`)];
  }
  const out: Cause[] = [];
  if (u.protocol !== 'https:') out.push(invalid(path, u.protocol.replace(/:$/, ''), "'https' is the only allowed URL scheme"));
  if (u.host === '') out.push(invalid(path, u.host, 'host must be specified'));
  if (u.username || u.password) out.push(invalid(path, u.username + (u.password ? ':' + u.password : ''), 'user information is not permitted in the URL'));
  if (url.includes('#')) out.push(invalid(path, u.hash.slice(1), 'fragments are not permitted in the URL'));
  if (url.includes('?')) out.push(invalid(path, u.search.slice(1), 'query parameters are not permitted in the URL'));
  return out;
}

/** Upstream ValidateWebhookService. */
function validateService(path: string, svc: Record<string, unknown>): Cause[] {
  const out: Cause[] = [];
  const name = str(svc.name) ?? '';
  const ns = str(svc.namespace) ?? '';
  if (name === '') out.push(required(child(path, 'name'), 'service name is required'));
  if (ns === '') out.push(required(child(path, 'namespace'), 'service namespace is required'));
  const port = svc.port;
  if (typeof port === 'number') out.push(...portNumErrors(port).map((m) => invalid(child(path, 'port'), port, `port is not valid: ${m}`)));
  const p = str(svc.path);
  if (p !== undefined && p !== '') {
    if (!p.startsWith('/')) out.push(invalid(child(path, 'path'), p, "must start with a '/'"));
    else if (p === '/') return out;
    else if (p.endsWith('/')) out.push(invalid(child(path, 'path'), p, "must not end with a '/'"));
    else {
      p.slice(1).split('/').forEach((step, i) => {
        if (step === '') out.push(invalid(child(path, 'path'), p, `segment[${i}] may not be empty`));
        else out.push(...messages(child(path, 'path'), p, dns1123SubdomainErrors(step).map((m) => `segment[${i}]: ${m}`)));
      });
    }
  }
  return out;
}

/** Upstream: exactly one of url or service. */
export function validateClientConfig(path: string, value: unknown): Cause[] {
  const cc = rec(value) ?? {};
  const url = str(cc.url);
  const svc = rec(cc.service);
  if ((url === undefined) === (svc === undefined)) return [required(path, 'exactly one of url or service is required')];
  return url !== undefined ? validateWebhookUrl(child(path, 'url'), url) : validateService(child(path, 'service'), svc!);
}

/** A webhook name: a DNS subdomain with at least three segments (upstream IsFullyQualifiedName). */
export function validateWebhookName(path: string, name: string): Cause[] {
  if (name === '') return [required(path, '')];
  const errs = dns1123SubdomainErrors(name);
  if (errs.length > 0) return messages(path, name, errs);
  if (name.split('.').length < 3) return [invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

/** admissionReviewVersions: required, DNS-1035-ish labels, unique, one the server speaks. */
export function validateReviewVersions(path: string, value: unknown): Cause[] {
  const versions = strs(value);
  if (versions.length === 0) return [required(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const out: Cause[] = [];
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    if (seen.has(v)) out.push(invalid(index(path, i), v, 'duplicate version'));
    seen.add(v);
  });
  if (!versions.some((v) => REVIEW_VERSIONS.includes(v))) out.push(invalid(path, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  return out;
}

export function oneOfOptional(path: string, v: unknown, valid: readonly string[]): Cause[] {
  return v === undefined || v === null || valid.includes(str(v) ?? '') ? [] : [notSupported(path, v, valid)];
}
