import { sameGroup } from '../api/group-names';
import type { UserInfo } from '../api/user';
import type { Attributes, Authorizer, Decision } from './authorizer';
import { AuthorizationConfigError } from './config-error';
import type { PolicyRule } from './rbac-rules';
import type { RuleList, RuleLister } from './rule-lister';

export const ABAC_API_VERSION = 'abac.authorization.svc.io/v1beta1';
/** Upstream's name of the same policy version (issue 17: policy files written for kube-apiserver load unchanged). */
const UPSTREAM_ABAC_API_VERSION = 'abac.authorization.kubernetes.io/v1beta1';

/** One policy line's spec (A.5). */
export interface AbacPolicy {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

const STRING_FIELDS = ['user', 'group', 'apiGroup', 'resource', 'namespace', 'nonResourcePath'] as const;
const READ_VERBS = new Set(['get', 'list', 'watch']);

/**
 * Parses an ABAC policy file: one JSON Policy object per line (no outer list), blank lines and
 * lines starting with # skipped. Any malformed line refuses the whole file, naming the line and field.
 */
export function parseAbacPolicies(text: string, file = 'policy file'): AbacPolicy[] {
  const out: AbacPolicy[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fail = (why: string) => new AuthorizationConfigError(`error reading policy file ${file}, line ${i + 1}: ${why}`);
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (err) {
      throw fail(`not a JSON object: ${(err as Error).message}`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw fail('not a JSON object');
    const o = v as Record<string, unknown>;
    if (o.apiVersion !== ABAC_API_VERSION && o.apiVersion !== UPSTREAM_ABAC_API_VERSION) throw fail(`apiVersion: must be ${ABAC_API_VERSION}, got ${JSON.stringify(o.apiVersion ?? '')}`);
    if (o.kind !== 'Policy') throw fail(`kind: must be Policy, got ${JSON.stringify(o.kind ?? '')}`);
    for (const k of Object.keys(o)) if (!['apiVersion', 'kind', 'spec', 'metadata'].includes(k)) throw fail(`${k}: unknown field`);
    const spec = o.spec;
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw fail('spec: must be an object');
    const s = spec as Record<string, unknown>;
    const p: AbacPolicy = { user: '', group: '', readonly: false, apiGroup: '', resource: '', namespace: '', nonResourcePath: '' };
    for (const [k, val] of Object.entries(s)) {
      if (k === 'readonly') {
        if (typeof val !== 'boolean') throw fail('spec.readonly: must be a boolean');
        p.readonly = val;
      } else if ((STRING_FIELDS as readonly string[]).includes(k)) {
        if (typeof val !== 'string') throw fail(`spec.${k}: must be a string`);
        p[k as (typeof STRING_FIELDS)[number]] = val;
      } else throw fail(`spec.${k}: unknown field`);
    }
    out.push(p);
  });
  return out;
}

/** Upstream subjectMatches: user (or *) and group (or *) must both hold when set. */
function subjectMatches(p: AbacPolicy, u: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user === '*') matched = true;
    else if (p.user === u.username) matched = true;
    else return false;
  }
  if (p.group) {
    if (p.group === '*' || u.groups.includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

/**
 * A.5 ABAC: a request is allowed when at least one policy line matches it; otherwise no opinion.
 * Follows upstream's matching: readonly policies match only get/list/watch; resource policies
 * match namespace, resource and apiGroup (each * for all); nonResourcePath is exact, * or a
 * trailing-* prefix.
 */
export class AbacAuthorizer implements Authorizer, RuleLister {
  readonly name = 'ABAC';

  constructor(private readonly policies: readonly AbacPolicy[]) {}

  authorize(a: Attributes): Promise<{ decision: Decision; reason?: string }> {
    return Promise.resolve({ decision: this.policies.some((p) => matches(p, a)) ? 'allow' : 'no-opinion' });
  }

  /** Upstream ABAC RulesFor: the rules of every policy whose subject matches, in that namespace. */
  rulesFor(user: UserInfo, namespace: string): RuleList {
    const rules: PolicyRule[] = [];
    for (const p of this.policies) {
      if (!subjectMatches(p, user)) continue;
      const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
      if (p.resource && (p.namespace === '*' || p.namespace === namespace)) {
        rules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource] });
      }
      if (p.nonResourcePath) rules.push({ verbs: p.readonly ? ['get'] : ['*'], nonResourceURLs: [p.nonResourcePath] });
    }
    return { rules, incomplete: false };
  }
}

export function matches(p: AbacPolicy, a: Attributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  const i = a.info;
  if (p.readonly && !READ_VERBS.has(i.verb)) return false;
  if (i.isResourceRequest) {
    return (p.namespace === '*' || p.namespace === i.namespace) && (p.resource === '*' || p.resource === i.resource) && (p.apiGroup === '*' || sameGroup(p.apiGroup, i.apiGroup));
  }
  if (p.nonResourcePath === '*' || p.nonResourcePath === i.path) return true;
  return p.nonResourcePath.endsWith('*') && i.path.startsWith(p.nonResourcePath.replace(/\*+$/, ''));
}
