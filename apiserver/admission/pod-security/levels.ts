/**
 * Pod Security Standards levels and versions, and a namespace's policy read from its labels
 * (upstream's k8s.io/pod-security-admission api package: the same label names, parsing rules and
 * messages). The labels are read under both spellings: `pod-security.svc.io/*` (the spec's group
 * domain) and `pod-security.kubernetes.io/*` (what stock charts and manifests set).
 */

export type Level = 'privileged' | 'baseline' | 'restricted';
const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** A policy version: v1.<minor>, or latest (newer than any numbered version). */
export type Version = { latest: true } | { latest: false; minor: number };
export const LATEST: Version = { latest: true };

export interface LevelVersion {
  level: Level;
  version: Version;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export type Mode = keyof Policy;
export const MODES: readonly Mode[] = ['enforce', 'audit', 'warn'];

/** The label prefixes, the spec's first: a namespace may carry either. */
export const LABEL_PREFIXES = ['pod-security.svc.io/', 'pod-security.kubernetes.io/'] as const;

export function versionString(v: Version): string {
  return v.latest ? 'latest' : `v1.${v.minor}`;
}

/** "restricted:latest", as upstream prints a LevelVersion in its messages. */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

export function parseLevel(text: string): Level | { error: string } {
  return (LEVELS as readonly string[]).includes(text) ? (text as Level) : { error: `must be one of ${LEVELS.join(', ')}` };
}

export function parseVersion(text: string): Version | { error: string } {
  if (text === 'latest') return LATEST;
  const m = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(text);
  if (!m || !Number.isSafeInteger(Number(m[1]))) return { error: 'must be "latest" or "v1.x"' };
  return { latest: false, minor: Number(m[1]) };
}

/** a older than b (latest is never older; every numbered version is older than latest). */
export function olderThan(a: Version, b: Version): boolean {
  if (a.latest) return false;
  if (b.latest) return true;
  return a.minor < b.minor;
}

export function compareLevels(a: Level, b: Level): number {
  return LEVELS.indexOf(a) - LEVELS.indexOf(b);
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && versionString(a.version) === versionString(b.version);
}

/** A label that could not be read: the field (metadata.labels[key]), the value and why. */
export interface LabelError {
  field: string;
  value: string;
  detail: string;
}

type LabelRead = { value: string; key: string } | { conflict: LabelError } | undefined;

/** The label named `pod-security.*\/<name>` in either spelling; both set to different values is an error. */
function readLabel(labels: Record<string, string>, name: string): LabelRead {
  const found = LABEL_PREFIXES.map((p) => ({ key: p + name, value: labels[p + name] })).filter((f) => f.value !== undefined);
  if (found.length === 0) return undefined;
  if (found.length === 2 && found[0].value !== found[1].value) {
    return { conflict: { field: `metadata.labels[${found[1].key}]`, value: found[1].value, detail: `must equal ${found[0].key} ("${found[0].value}") when both are set` } };
  }
  return found[0];
}

/**
 * The policy a namespace's labels select over the defaults, and the labels that could not be read
 * (upstream's PolicyToEvaluate): a bad enforce level fails closed (restricted), a bad audit or
 * warn level fails open (privileged), a bad version reads as latest; warn follows enforce when
 * only enforce is set and it is stricter.
 */
export function policyFromLabels(labels: Record<string, string> | undefined, defaults: Policy): { policy: Policy; errors: LabelError[] } {
  const policy: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: LabelError[] = [];
  if (!labels || Object.keys(labels).length === 0) return { policy, errors };
  const read = (name: string): { value: string; key: string } | undefined => {
    const r = readLabel(labels, name);
    if (r && 'conflict' in r) {
      errors.push(r.conflict);
      return undefined;
    }
    return r;
  };
  const level = (mode: Mode, failTo: Level): boolean => {
    const l = read(mode);
    if (!l) return false;
    const parsed = parseLevel(l.value);
    if (typeof parsed === 'string') policy[mode].level = parsed;
    else {
      policy[mode].level = failTo;
      errors.push({ field: `metadata.labels[${l.key}]`, value: l.value, detail: parsed.error });
    }
    return typeof parsed === 'string';
  };
  const version = (mode: Mode): boolean => {
    const v = read(`${mode}-version`);
    if (!v) return false;
    const parsed = parseVersion(v.value);
    if ('error' in parsed) {
      policy[mode].version = LATEST;
      errors.push({ field: `metadata.labels[${v.key}]`, value: v.value, detail: parsed.error });
    } else policy[mode].version = parsed;
    return true;
  };
  const hasEnforceLevel = level('enforce', 'restricted');
  version('enforce');
  level('audit', 'privileged');
  version('audit');
  const hasWarnLevel = readLabel(labels, 'warn') !== undefined;
  level('warn', 'privileged');
  const hasWarnVersion = version('warn');
  if (!hasWarnLevel && hasEnforceLevel && compareLevels(policy.enforce.level, policy.warn.level) > 0) {
    policy.warn.level = policy.enforce.level;
    if (!hasWarnVersion) policy.warn.version = policy.enforce.version;
  }
  return { policy, errors };
}
