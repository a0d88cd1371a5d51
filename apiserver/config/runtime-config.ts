/**
 * --runtime-config (spec 9.1; upstream's resourceconfig): comma-separated <key>[=true|false]
 * pairs, a missing value meaning true. Keys: api/all, api/ga, api/beta, api/alpha (every version
 * of that stability), api/legacy and v1 or api/v1 (the core group), <group>/<version>, and
 * <group>/<version>/<resource>. Later, more specific keys win, as upstream merges them: all, then
 * the stability keys, then group versions, then resources. A group may be written with its
 * svc.io or its k8s.io name.
 *
 * Versions not named keep their default: stable versions on; beta versions on only when they
 * were introduced before release 1.22 (the spec's rule; newer betas are off, as upstream since
 * 1.24); alpha versions off.
 */

export type Stability = 'alpha' | 'beta' | 'ga';

interface Entry {
  key: string;
  value: boolean;
}

export interface RuntimeConfig {
  entries: Entry[];
}

/** Beta group versions on by default: those introduced before 1.22 (spec 9.1); the resource metrics API (metrics.k8s.io/v1beta1, served by metrics-server since 1.8) among them. */
const BETA_ON_BY_DEFAULT = new Set(['authentication.svc.io/v1beta1', 'authorization.svc.io/v1beta1', 'metrics.svc.io/v1beta1']);

export function stabilityOf(version: string): Stability {
  if (/^v\d+alpha\d+$/.test(version)) return 'alpha';
  if (/^v\d+beta\d+$/.test(version)) return 'beta';
  return 'ga';
}

/** One spelling for a group: k8s.io names are their svc.io group; the core group is "". */
export function canonicalGroup(group: string): string {
  if (group === 'api' || group === '') return '';
  return group.replace(/\.k8s\.io$/, '.svc.io');
}

/** Parses the flag's pairs; returns the problem (upstream's wording where it has one) for a bad pair. */
export function parseRuntimeConfig(pairs: readonly string[]): RuntimeConfig | { error: string } {
  const entries: Entry[] = [];
  for (const pair of pairs) {
    if (!pair.trim()) continue;
    const eq = pair.indexOf('=');
    const key = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    const text = eq < 0 ? 'true' : pair.slice(eq + 1).trim();
    if (text !== 'true' && text !== 'false') return { error: `invalid value ${JSON.stringify(text)} for ${key}: must be true or false` };
    if (!key || key.split('/').length > 3 || key.split('/').some((p) => p === '')) return { error: `invalid key ${JSON.stringify(key)}: must be api/all, api/ga, api/beta, api/alpha, <group>/<version> or <group>/<version>/<resource>` };
    entries.push({ key, value: text === 'true' });
  }
  return { entries };
}

const STABILITY_KEYS: Record<string, Stability | 'all'> = { 'api/all': 'all', 'api/ga': 'ga', 'api/beta': 'beta', 'api/alpha': 'alpha' };

/** The group version a key names ("" group for core), or undefined for the stability keys. */
function groupVersionOf(key: string): { group: string; version: string; resource?: string } | undefined {
  if (key in STABILITY_KEYS) return undefined;
  if (key === 'api/legacy' || key === 'v1' || key === 'api/v1') return { group: '', version: 'v1' };
  const parts = key.split('/');
  if (parts.length === 1) return { group: '', version: parts[0] };
  if (parts[0] === 'api' && parts.length === 3) return { group: '', version: parts[1], resource: parts[2] };
  return { group: canonicalGroup(parts[0]), version: parts[1], resource: parts[2] };
}

/** Keys naming a group version the server does not have (upstream refuses them at start). */
export function unknownKeys(cfg: RuntimeConfig, known: ReadonlySet<string>): string[] {
  return cfg.entries.filter((e) => {
    const gv = groupVersionOf(e.key);
    return gv !== undefined && !known.has(`${canonicalGroup(gv.group)}/${gv.version}`);
  }).map((e) => e.key);
}

/** Whether a resource of a group version is served under the flag's pairs and the defaults. */
export function isEnabled(cfg: RuntimeConfig, group: string, version: string, resource: string): boolean {
  const g = canonicalGroup(group);
  const stability = stabilityOf(version);
  let on = stability === 'ga' || (stability === 'beta' && BETA_ON_BY_DEFAULT.has(`${g}/${version}`));
  // Precedence as upstream: all < stability < group version < resource; the last pair of a rank wins.
  const ranked = (rank: number) => cfg.entries.filter((e) => rankOf(e.key) === rank);
  for (const e of ranked(0)) on = e.value;
  for (const e of ranked(1)) if (STABILITY_KEYS[e.key] === stability) on = e.value;
  for (const e of ranked(2)) {
    const gv = groupVersionOf(e.key)!;
    if (gv.group === g && gv.version === version) on = e.value;
  }
  for (const e of ranked(3)) {
    const gv = groupVersionOf(e.key)!;
    if (gv.group === g && gv.version === version && gv.resource === resource) on = e.value;
  }
  return on;
}

function rankOf(key: string): number {
  if (key === 'api/all') return 0;
  if (key in STABILITY_KEYS) return 1;
  return groupVersionOf(key)?.resource ? 3 : 2;
}
