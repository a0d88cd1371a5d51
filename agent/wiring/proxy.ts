/**
 * Start-up phase: the network proxy (agent/proxy/), unless `proxy.mode: disabled`. The nftables
 * mode needs kernel 5.13 (5.4 with the skip option; spec Appendix D): on an older kernel the
 * proxy does not start and the agent runs on without it, saying why. Programs IPv6 too when the
 * kernel has IPv6.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { HttpApiClient } from '../client/http-api-client';
import { nftablesKernelProblem } from '../proxy/kernel';
import { ConntrackCommand, NftCommand, systemTool } from '../proxy/nft-exec';
import type { Family } from '../proxy/nft-model';
import { Proxier } from '../proxy/proxier';
import { proxyMetrics } from '../proxy/proxy-metrics';
import type { AgentContext } from './context';

export interface ProxyHost {
  /** /proc/sys/kernel/osrelease. */
  osRelease(): string;
  /** Whether the kernel has IPv6 (/proc/net/if_inet6 exists). */
  hasIPv6(): boolean;
  /** The process environment (upstream's skip variable). */
  env: NodeJS.ProcessEnv;
  /** The nft binary's path, or undefined when the system has none. */
  nftPath(): string | undefined;
}

export const realProxyHost: ProxyHost = {
  osRelease: () => readFileSync('/proc/sys/kernel/osrelease', 'utf8'),
  hasIPv6: () => existsSync('/proc/net/if_inet6'),
  env: process.env,
  nftPath: () => {
    const p = systemTool('nft');
    return p.startsWith('/') ? p : undefined;
  },
};

/** Starts the proxy when configured and possible; resolves it (for the health check), or undefined. */
export function startProxy(ctx: AgentContext, client: HttpApiClient, host: ProxyHost = realProxyHost): Proxier | undefined {
  const { cfg, log, signal, clock, running, metrics } = ctx;
  const c = cfg.config.proxy;
  const plog = log.child({ component: 'proxy' });
  if (c.mode === 'disabled') {
    plog.info({}, 'network proxy disabled (proxy.mode: disabled)');
    return undefined;
  }
  if (cfg.config.containerRuntimeEndpoint.startsWith('sim://')) {
    // The simulator's pods have no network to route to, and its agent must not touch the host's rules.
    plog.info({}, 'network proxy not started: the CRI simulator\'s pods have no network');
    return undefined;
  }
  let release: string;
  try {
    release = host.osRelease();
  } catch (e) {
    release = `unreadable: ${(e as Error).message}`;
  }
  const skip = c.skipKernelVersionCheck || (host.env.KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK ?? '') !== '';
  const problem = nftablesKernelProblem(release, skip);
  if (problem) {
    plog.error({ error: problem }, 'network proxy not started; set proxy.mode: disabled if this node does not need it');
    return undefined;
  }
  const nft = host.nftPath();
  if (!nft) {
    plog.error({}, 'network proxy not started: no nft binary in /usr/sbin, /sbin, /usr/bin, /bin or /usr/local/sbin (install nftables, or set proxy.mode: disabled)');
    return undefined;
  }
  const families: Family[] = host.hasIPv6() ? ['ip', 'ip6'] : ['ip'];
  const proxier = new Proxier({
    client,
    nodeName: cfg.nodeName,
    clock,
    log: plog,
    nft: new NftCommand([nft]),
    conntrack: new ConntrackCommand(),
    families,
    rules: { clusterCIDRs: c.clusterCIDR === '' ? [] : c.clusterCIDR.split(',').map((s) => s.trim()), masqueradeAll: c.masqueradeAll },
    minSyncPeriodMs: c.minSyncPeriod,
    observer: proxyMetrics(metrics.registry),
  });
  running.loops.push(proxier.run(signal));
  plog.info({ mode: c.mode, families }, 'network proxy started');
  return proxier;
}
