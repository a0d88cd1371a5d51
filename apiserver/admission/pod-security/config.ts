/**
 * PodSecurityConfiguration (pod-security.admission.config.k8s.io/v1, also v1beta1 and v1alpha1,
 * and the svc.io spelling), from the admission configuration file: the cluster's default levels
 * and versions (privileged:latest when unset, as upstream) and the exempt users, namespaces and
 * runtime classes. Every problem names the file and the field.
 */
import { AdmissionConfigError, type PluginConfig } from '../../config/admission-config';
import { isObject } from '../../api/types';
import { LATEST, parseLevel, parseVersion, type Policy } from './levels';
import type { PodSecurityConfig } from './plugin';

const GROUPS = ['pod-security.admission.config.k8s.io', 'pod-security.admission.config.svc.io'];
const DEFAULT_KEYS = ['enforce', 'enforce-version', 'audit', 'audit-version', 'warn', 'warn-version'];

export const DEFAULT_POD_SECURITY: PodSecurityConfig = {
  defaults: { enforce: { level: 'privileged', version: LATEST }, audit: { level: 'privileged', version: LATEST }, warn: { level: 'privileged', version: LATEST } },
  exemptions: { usernames: [], namespaces: [], runtimeClasses: [] },
};

function stringList(v: unknown, at: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '')) throw new AdmissionConfigError(`${at}: Invalid value: must be a list of non-empty strings`);
  const seen = new Set<string>();
  for (const x of v as string[]) {
    if (seen.has(x)) throw new AdmissionConfigError(`${at}: Duplicate value: ${JSON.stringify(x)}`);
    seen.add(x);
  }
  return v as string[];
}

export function parsePodSecurityConfig(cfg: PluginConfig | undefined): PodSecurityConfig {
  if (!cfg) return DEFAULT_POD_SECURITY;
  const { value: v, source } = cfg;
  const [group, version] = (typeof v.apiVersion === 'string' ? v.apiVersion : '').split('/');
  if (!GROUPS.includes(group) || !['v1', 'v1beta1', 'v1alpha1'].includes(version)) {
    throw new AdmissionConfigError(`${source}: apiVersion: Unsupported value: ${JSON.stringify(v.apiVersion)}: supported values: "pod-security.admission.config.k8s.io/v1"`);
  }
  if (v.kind !== 'PodSecurityConfiguration') throw new AdmissionConfigError(`${source}: kind: Invalid value: ${JSON.stringify(v.kind)}: must be PodSecurityConfiguration`);
  for (const k of Object.keys(v)) if (!['apiVersion', 'kind', 'defaults', 'exemptions'].includes(k)) throw new AdmissionConfigError(`${source}: ${k}: unknown field`);
  const d = v.defaults ?? {};
  if (!isObject(d)) throw new AdmissionConfigError(`${source}: defaults: Invalid value: must be an object`);
  const policy: Policy = structuredClone(DEFAULT_POD_SECURITY.defaults);
  for (const [k, raw] of Object.entries(d)) {
    if (!DEFAULT_KEYS.includes(k)) throw new AdmissionConfigError(`${source}: defaults.${k}: unknown field`);
    const text = String(raw);
    const [mode, isVersion] = k.split('-') as ['enforce' | 'audit' | 'warn', string | undefined];
    const parsed = isVersion ? parseVersion(text) : parseLevel(text);
    if (typeof parsed === 'object' && 'error' in parsed) throw new AdmissionConfigError(`${source}: defaults.${k}: Invalid value: ${JSON.stringify(text)}: ${parsed.error}`);
    if (isVersion) policy[mode].version = parsed as Policy['enforce']['version'];
    else policy[mode].level = parsed as Policy['enforce']['level'];
  }
  const e = v.exemptions ?? {};
  if (!isObject(e)) throw new AdmissionConfigError(`${source}: exemptions: Invalid value: must be an object`);
  for (const k of Object.keys(e)) if (!['usernames', 'namespaces', 'runtimeClasses'].includes(k)) throw new AdmissionConfigError(`${source}: exemptions.${k}: unknown field`);
  return {
    defaults: policy,
    exemptions: {
      usernames: stringList(e.usernames, `${source}: exemptions.usernames`),
      namespaces: stringList(e.namespaces, `${source}: exemptions.namespaces`),
      runtimeClasses: stringList(e.runtimeClasses, `${source}: exemptions.runtimeClasses`),
    },
  };
}
