/**
 * Start-up phase 6b: the node-local cluster DNS server (agent/dns/cluster-dns.ts), when
 * dns.enabled, before the pods so their first lookups find it; and the reader of the node's
 * resolver configuration the pods' DNS settings are built from (resolvConf, read for each new
 * sandbox as the kubelet does).
 */
import type { HttpApiClient } from '../client/http-api-client';
import { DEFAULT_CACHE_LIMITS } from '../dns/answer-cache';
import { ClusterDns } from '../dns/cluster-dns';
import { ListenInterface } from '../dns/listen-interface';
import { readHostResolverConfig, type ResolverConfig } from '../dns/resolv-conf';
import type { Log } from '../platform/logger';
import type { AgentContext } from './context';

/** Reads resolvConf for each pod sandbox; a file that cannot be read is logged and the runtime's default (the node's resolv.conf) used. */
export function hostResolverReader(path: string, log: Log): () => Promise<ResolverConfig | undefined> {
  return async () => {
    try {
      return await readHostResolverConfig(path);
    } catch (e) {
      log.warn({ resolvConf: path, error: (e as Error).message }, 'cannot read the node resolver configuration (resolvConf): pods with host DNS get the runtime default');
      return undefined;
    }
  };
}

export async function startClusterDns(ctx: AgentContext, client: HttpApiClient): Promise<ClusterDns | undefined> {
  const { cfg, log, signal, clock, running } = ctx;
  const c = cfg.config;
  if (!c.dns.enabled) return undefined;
  const dnsLog = log.child({ component: 'cluster-dns' });
  // validate.ts guarantees one of the two is set when DNS is enabled.
  const listenAddress = c.dns.listenAddress || c.clusterDNS[0];
  let servers: string[] = [];
  try {
    servers = (await readHostResolverConfig(c.resolvConf)).servers;
  } catch (e) {
    dnsLog.warn({ resolvConf: c.resolvConf, error: (e as Error).message }, 'cannot read the node resolver configuration: names outside the cluster will get SERVFAIL');
  }
  const dns = new ClusterDns({
    client,
    clock,
    log: dnsLog,
    domain: c.clusterDomain,
    listen: { address: listenAddress, port: c.dns.port },
    ...(c.dns.interfaceName ? { listenInterface: new ListenInterface(c.dns.interfaceName, listenAddress) } : {}),
    upstreams: servers.map((address) => ({ address, port: 53 })),
    upstreamTimeoutMs: c.dns.upstreamTimeout,
    cache: { ...DEFAULT_CACHE_LIMITS, maxEntries: c.dns.cacheSize },
    pods: c.dns.pods,
  });
  ctx.metrics.observeDns({ counters: () => dns.handler.counters, cacheEntries: () => dns.cache.size });
  running.loops.push(
    dns.run(signal).catch((err: unknown) => {
      // The agent keeps running its pods; the cause (usually the address not on the node) is logged.
      dnsLog.error({ err, listen: listenAddress, port: c.dns.port }, 'the cluster DNS server stopped');
    }),
  );
  return dns;
}
