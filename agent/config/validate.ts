/**
 * Checks that span several fields, run once on the merged configuration. Each problem is
 * attributed to the file (or flag) that last set one of the fields involved, so the message
 * still names where to look even though the values came from different drop-ins.
 */
import type { ConfigProblem } from './config-error';
import type { FeatureGates } from './feature-gates';
import type { NodeAgentConfiguration } from './types';
import { formatDuration } from '../../apiserver/api/duration';

/** Where each field path was last set; paths not present came from defaults. */
export class Provenance {
  private readonly sources = new Map<string, string>();

  /** Records that `source` set `path` (later calls win). */
  set(path: string, source: string): void {
    this.sources.delete(path);
    this.sources.set(path, source);
  }

  /** The source that last set `path` or anything under it, or "default value". */
  sourceOf(path: string): string {
    let found: string | undefined;
    for (const [p, src] of this.sources) {
      if (p === path || p.startsWith(path + '.') || p.startsWith(path + '[')) found = src;
    }
    return found ?? 'default value';
  }

  /** The latest source among several fields (the one that most likely broke the relation). */
  latestOf(paths: readonly string[]): string {
    let best: string | undefined;
    let bestIdx = -1;
    const entries = [...this.sources.entries()];
    entries.forEach(([p, src], i) => {
      if (paths.some((path) => p === path || p.startsWith(path + '.') || p.startsWith(path + '['))) {
        if (i > bestIdx) {
          bestIdx = i;
          best = src;
        }
      }
    });
    return best ?? 'default value';
  }
}

/** Every cross-field problem of a merged configuration (upstream: pkg/kubelet/apis/config/validation). */
export function validateMerged(c: NodeAgentConfiguration, gates: FeatureGates, prov: Provenance): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const problem = (field: string, related: readonly string[], message: string) =>
    out.push({ source: prov.latestOf([field, ...related]), field, message });

  if (c.imageGCLowThresholdPercent >= c.imageGCHighThresholdPercent) {
    problem('imageGCLowThresholdPercent', ['imageGCHighThresholdPercent'], `invalid value ${c.imageGCLowThresholdPercent}: must be less than imageGCHighThresholdPercent (${c.imageGCHighThresholdPercent})`);
  }
  if (c.shutdownGracePeriodCriticalPods > c.shutdownGracePeriod) {
    problem('shutdownGracePeriodCriticalPods', ['shutdownGracePeriod'], `invalid value "${formatDuration(c.shutdownGracePeriodCriticalPods)}": must be <= shutdownGracePeriod (${formatDuration(c.shutdownGracePeriod)})`);
  }
  if (!gates.enabled('GracefulNodeShutdown') && (c.shutdownGracePeriod > 0 || c.shutdownGracePeriodCriticalPods > 0)) {
    problem('shutdownGracePeriod', ['shutdownGracePeriodCriticalPods', 'featureGates'], 'specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires feature gate GracefulNodeShutdown');
  }
  if (!gates.enabled('NodeSwap') && c.memorySwap.swapBehavior !== '') {
    problem('memorySwap.swapBehavior', ['featureGates'], 'memorySwap.swapBehavior cannot be set when NodeSwap feature flag is disabled');
  }
  if ((c.tlsCertFile === '') !== (c.tlsPrivateKeyFile === '')) {
    const missing = c.tlsCertFile === '' ? 'tlsCertFile' : 'tlsPrivateKeyFile';
    problem(missing, ['tlsCertFile', 'tlsPrivateKeyFile'], 'required value: tlsCertFile and tlsPrivateKeyFile must be set together');
  }
  for (const signal of Object.keys(c.evictionSoft)) {
    if (!(signal in c.evictionSoftGracePeriod)) {
      problem(`evictionSoft[${signal}]`, ['evictionSoftGracePeriod'], `grace period must be specified for the soft eviction threshold ${signal} in evictionSoftGracePeriod`);
    }
  }
  if (c.enforceNodeAllocatable.includes('none') && c.enforceNodeAllocatable.length > 1) {
    problem('enforceNodeAllocatable', [], 'may not contain additional enforcements when "none" is specified');
  }
  if (c.dns.enabled && c.clusterDomain === '') {
    problem('clusterDomain', ['dns.enabled'], 'required value: the cluster DNS server (dns.enabled) needs clusterDomain, e.g. "cluster.local"');
  }
  if (c.dns.enabled && c.dns.listenAddress === '' && c.clusterDNS.length === 0) {
    problem('dns.listenAddress', ['dns.enabled', 'clusterDNS'], 'required value: set dns.listenAddress or clusterDNS when dns.enabled is true (the address pods are told to query)');
  }
  return out;
}
