/**
 * The admission configuration file (--admission-control-config-file): an AdmissionConfiguration
 * (apiserver.config.k8s.io/v1, also v1alpha1 and apiserver.k8s.io/v1alpha1 as upstream reads,
 * and the svc.io spellings) listing per-plugin configuration inline (`configuration`) or in a file
 * of its own (`path`, relative to this file). Each plugin parses its own part; this reads the
 * envelope, and every problem names the file and the field.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import YAML from 'yaml';
import { isObject } from '../api/types';

const API_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1alpha1', 'apiserver.k8s.io/v1alpha1', 'apiserver.config.svc.io/v1', 'apiserver.config.svc.io/v1alpha1'];

export class AdmissionConfigError extends Error {}

/** One plugin's configuration document, with where it came from for the plugin's own messages. */
export interface PluginConfig {
  value: Record<string, unknown>;
  source: string;
}

function readDoc(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new AdmissionConfigError(`${file}: cannot read: ${(err as Error).message}`);
  }
  try {
    return YAML.parse(text);
  } catch (err) {
    throw new AdmissionConfigError(`${file}: invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** The plugins' configurations by plugin name; undefined path means none. */
export function loadAdmissionConfig(file: string | undefined): Map<string, PluginConfig> {
  const out = new Map<string, PluginConfig>();
  if (!file) return out;
  const doc = readDoc(file);
  if (!isObject(doc)) throw new AdmissionConfigError(`${file}: must be an AdmissionConfiguration object`);
  if (doc.kind !== 'AdmissionConfiguration') throw new AdmissionConfigError(`${file}: kind: Invalid value: ${JSON.stringify(doc.kind)}: must be AdmissionConfiguration`);
  if (!API_VERSIONS.includes(String(doc.apiVersion))) {
    throw new AdmissionConfigError(`${file}: apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: ${API_VERSIONS.map((v) => `"${v}"`).join(', ')}`);
  }
  for (const k of Object.keys(doc)) if (!['apiVersion', 'kind', 'plugins'].includes(k)) throw new AdmissionConfigError(`${file}: ${k}: unknown field`);
  const plugins = doc.plugins ?? [];
  if (!Array.isArray(plugins)) throw new AdmissionConfigError(`${file}: plugins: Invalid value: must be a list`);
  const names = new Set<string>();
  plugins.forEach((p, i) => {
    const at = `${file}: plugins[${i}]`;
    if (!isObject(p) || typeof p.name !== 'string' || !p.name) throw new AdmissionConfigError(`${at}.name: Required value`);
    if (names.has(p.name)) throw new AdmissionConfigError(`${at}.name: Duplicate value: ${JSON.stringify(p.name)}`);
    names.add(p.name);
    for (const k of Object.keys(p)) if (!['name', 'path', 'configuration'].includes(k)) throw new AdmissionConfigError(`${at}.${k}: unknown field`);
    if (p.configuration !== undefined && p.path !== undefined) throw new AdmissionConfigError(`${at}: Invalid value: path and configuration are mutually exclusive`);
    if (p.configuration !== undefined) {
      if (!isObject(p.configuration)) throw new AdmissionConfigError(`${at}.configuration: Invalid value: must be an object`);
      out.set(p.name, { value: p.configuration, source: `${file}: plugins[${i}].configuration` });
    } else if (typeof p.path === 'string') {
      const target = isAbsolute(p.path) ? p.path : join(dirname(file), p.path);
      const value = readDoc(target);
      if (!isObject(value)) throw new AdmissionConfigError(`${target}: must be an object`);
      out.set(p.name, { value, source: target });
    }
  });
  return out;
}
