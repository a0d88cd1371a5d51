/**
 * Metric stability levels and deprecation (upstream k8s.io/component-base/metrics; spec sections 3
 * and 9.2): every metric declares ALPHA, BETA or STABLE, shown in its HELP text as upstream's
 * `[STABLE] ...`; a deprecated one's HELP says since when (`(Deprecated since 1.31.0) ...`) and a
 * warning is logged when it is registered; once its post-deprecation lifetime is over (spec 9.2.8:
 * STABLE 3 releases, BETA 1, ALPHA 0 — hidden from the next release, as upstream's guard) it is
 * hidden, not registered, unless
 * `--show-hidden-metrics-for-version` names the previous minor release (upstream's only accepted
 * value), which shows the hidden metrics again for one release.
 *
 * Versions are those of the Kubernetes release svc-apiserver follows for its metrics (1.33, the
 * release its feature gates and APIs follow), not svc's own release number.
 */

export type MetricStability = 'ALPHA' | 'BETA' | 'STABLE';

/** The Kubernetes minor release whose metric names and lifecycles svc-apiserver follows. */
export const METRICS_RELEASE = { major: 1, minor: 33 } as const;

const LIFETIME_AFTER_DEPRECATION: Record<MetricStability, number> = { STABLE: 3, BETA: 1, ALPHA: 0 };

export interface MetricDeclaration {
  stability: MetricStability;
  /** "1.31": the release that deprecated the metric; absent when it is not deprecated. */
  deprecatedVersion?: string;
}

function minorOf(version: string): { major: number; minor: number } | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(version.trim());
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}

/** The HELP text as upstream renders it: stability level, then the deprecation, then the text. */
export function stabilityHelp(d: MetricDeclaration, help: string): string {
  const dep = d.deprecatedVersion ? minorOf(d.deprecatedVersion) : undefined;
  const text = dep ? `(Deprecated since ${dep.major}.${dep.minor}.0) ${help}` : help;
  return `[${d.stability}] ${text}`;
}

/** Whether a metric is hidden in this release: deprecated, and its lifetime after deprecation is over. */
export function isHidden(d: MetricDeclaration, current: { major: number; minor: number } = METRICS_RELEASE): boolean {
  const dep = d.deprecatedVersion ? minorOf(d.deprecatedVersion) : undefined;
  if (!dep) return false;
  if (dep.major !== current.major) return dep.major < current.major;
  return current.minor >= dep.minor + Math.max(1, LIFETIME_AFTER_DEPRECATION[d.stability]);
}

/**
 * --show-hidden-metrics-for-version: '' (not given) or the previous minor release, else upstream's
 * error. Returns whether hidden metrics are shown.
 */
export function parseShowHiddenMetrics(value: string, current: { major: number; minor: number } = METRICS_RELEASE): { show: boolean } | { error: string } {
  if (value === '') return { show: false };
  const previous = `${current.major}.${current.minor - 1}`;
  const v = minorOf(value);
  if (!v || `${v.major}.${v.minor}` !== previous || /^\d+\.\d+\.\d+$/.test(value.trim())) {
    return { error: `--show-hidden-metrics-for-version must be omitted or have the value '${previous}'. Only the previous minor version is allowed` };
  }
  return { show: true };
}
