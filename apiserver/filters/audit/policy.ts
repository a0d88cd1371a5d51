/**
 * The audit policy (--audit-policy-file): audit.k8s.io/v1 Policy (also audit.svc.io/v1, the spec's
 * group domain), read strictly with problems naming the file and the field, and evaluated as
 * upstream's policy checker: the first rule that matches a request sets its level (None when no
 * rule matches), its omitted stages are the policy's plus the rule's, and omitManagedFields is
 * the rule's when it says, else the policy's.
 */
import YAML from 'yaml';
import { isObject } from '../../api/types';
import type { UserInfo } from '../../api/user';
import type { RequestInfo } from '../../server/request-info';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type AuditLevel = (typeof LEVELS)[number];
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

interface Rule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: Stage[];
  omitManagedFields?: boolean;
}

export interface AuditPolicy {
  rules: Rule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

/** What the policy decides for one request. */
export interface AuditDecision {
  level: AuditLevel;
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

export class AuditPolicyError extends Error {}

const API_VERSIONS = ['audit.k8s.io/v1', 'audit.svc.io/v1'];

function strings(o: Record<string, unknown>, key: string, at: string): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new AuditPolicyError(`${at}.${key}: Invalid value: must be a list of strings`);
  return v as string[];
}

function stages(o: Record<string, unknown>, key: string, at: string): Stage[] {
  const list = strings(o, key, at);
  list.forEach((s, i) => {
    if (!(STAGES as readonly string[]).includes(s)) throw new AuditPolicyError(`${at}.${key}[${i}]: Unsupported value: ${JSON.stringify(s)}: supported values: ${STAGES.map((x) => `"${x}"`).join(', ')}`);
  });
  return list as Stage[];
}

function known(o: Record<string, unknown>, at: string, keys: readonly string[]): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new AuditPolicyError(`${at}.${k}: unknown field`);
}

function parseRule(raw: unknown, at: string): Rule {
  if (!isObject(raw)) throw new AuditPolicyError(`${at}: Invalid value: must be an object`);
  known(raw, at, ['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields']);
  if (!(LEVELS as readonly unknown[]).includes(raw.level)) {
    throw new AuditPolicyError(raw.level === undefined ? `${at}.level: Required value` : `${at}.level: Unsupported value: ${JSON.stringify(raw.level)}: supported values: ${LEVELS.map((x) => `"${x}"`).join(', ')}`);
  }
  const resources = (Array.isArray(raw.resources) ? raw.resources : raw.resources === undefined ? [] : null)?.map((g, i) => {
    const gat = `${at}.resources[${i}]`;
    if (!isObject(g)) throw new AuditPolicyError(`${gat}: Invalid value: must be an object`);
    known(g, gat, ['group', 'resources', 'resourceNames']);
    const rs = strings(g, 'resources', gat);
    rs.forEach((r, j) => {
      if (r.includes('/') && !/^(\*|[^/*]+)\/(\*|[^/*]+)$/.test(r)) throw new AuditPolicyError(`${gat}.resources[${j}]: Invalid value: ${JSON.stringify(r)}: must be resource, resource/subresource, */subresource or resource/*`);
    });
    return { group: typeof g.group === 'string' ? g.group : '', resources: rs, resourceNames: strings(g, 'resourceNames', gat) };
  });
  if (!resources) throw new AuditPolicyError(`${at}.resources: Invalid value: must be a list`);
  const nonResourceURLs = strings(raw, 'nonResourceURLs', at);
  const namespaces = strings(raw, 'namespaces', at);
  if (nonResourceURLs.length && (resources.length || namespaces.length)) {
    throw new AuditPolicyError(`${at}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
  }
  nonResourceURLs.forEach((u, i) => {
    if (u !== '*' && (!u.startsWith('/') || u.slice(0, -1).includes('*'))) throw new AuditPolicyError(`${at}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(u)}: must start with "/" and may end with "*"`);
  });
  if (raw.omitManagedFields !== undefined && typeof raw.omitManagedFields !== 'boolean') throw new AuditPolicyError(`${at}.omitManagedFields: Invalid value: must be a boolean`);
  return {
    level: raw.level as AuditLevel,
    users: strings(raw, 'users', at),
    userGroups: strings(raw, 'userGroups', at),
    verbs: strings(raw, 'verbs', at),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: stages(raw, 'omitStages', at),
    omitManagedFields: raw.omitManagedFields,
  };
}

/** Parses the policy file's text (YAML or JSON); `file` names it in every problem. */
export function parseAuditPolicy(text: string, file: string): AuditPolicy {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new AuditPolicyError(`${file}: invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isObject(doc)) throw new AuditPolicyError(`${file}: must be a Policy object`);
  if (doc.kind !== 'Policy') throw new AuditPolicyError(`${file}: kind: Invalid value: ${JSON.stringify(doc.kind)}: must be Policy`);
  if (!API_VERSIONS.includes(String(doc.apiVersion))) throw new AuditPolicyError(`${file}: apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: ${API_VERSIONS.map((v) => `"${v}"`).join(', ')}`);
  known(doc, file + ':', ['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields']);
  if (!Array.isArray(doc.rules)) throw new AuditPolicyError(`${file}: rules: Required value`);
  if (doc.omitManagedFields !== undefined && typeof doc.omitManagedFields !== 'boolean') throw new AuditPolicyError(`${file}: omitManagedFields: Invalid value: must be a boolean`);
  return {
    rules: doc.rules.map((r, i) => parseRule(r, `${file}: rules[${i}]`)),
    omitStages: stages(doc, 'omitStages', `${file}:`),
    omitManagedFields: doc.omitManagedFields === true,
  };
}

/** Groups served under both names are one group to a policy (a rule may name either). */
function sameGroup(ruleGroup: string, requestGroup: string): boolean {
  const canon = (g: string) => g.replace(/\.k8s\.io$/, '.svc.io');
  return canon(ruleGroup) === canon(requestGroup);
}

function matchesResource(rule: Rule, info: RequestInfo): boolean {
  if (rule.resources.length === 0) return true;
  const combined = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  return rule.resources.some((gr) => {
    if (!sameGroup(gr.group, info.apiGroup)) return false;
    if (gr.resourceNames.length && !gr.resourceNames.includes(info.name)) return false;
    if (gr.resources.length === 0) return true;
    return gr.resources.some(
      (res) => res === combined || res === '*' || (info.subresource !== '' && res === `*/${info.subresource}`) || (res.endsWith('/*') && res.slice(0, -2) === info.resource),
    );
  });
}

function matchesURL(rule: Rule, path: string): boolean {
  return rule.nonResourceURLs.some((u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

function matches(rule: Rule, user: UserInfo | undefined, info: RequestInfo): boolean {
  if (rule.users.length && !rule.users.includes(user?.username ?? '')) return false;
  if (rule.userGroups.length && !(user?.groups ?? []).some((g) => rule.userGroups.includes(g))) return false;
  if (rule.verbs.length && !rule.verbs.includes(info.verb)) return false;
  if (info.isResourceRequest) {
    if (rule.nonResourceURLs.length) return false;
    if (rule.namespaces.length && !rule.namespaces.includes(info.namespace)) return false;
    return matchesResource(rule, info);
  }
  if (rule.resources.length || rule.namespaces.length) return false;
  return rule.nonResourceURLs.length === 0 || matchesURL(rule, info.path);
}

/** The first matching rule's decision; None when nothing matches. */
export function decide(policy: AuditPolicy, user: UserInfo | undefined, info: RequestInfo): AuditDecision {
  for (const rule of policy.rules) {
    if (!matches(rule, user, info)) continue;
    return { level: rule.level, omitStages: new Set([...policy.omitStages, ...rule.omitStages]), omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields };
  }
  return { level: 'None', omitStages: new Set(), omitManagedFields: false };
}
