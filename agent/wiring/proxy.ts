/**
 * Start-up phase: the network proxy (agent/proxy/), unless `proxy.mode: disabled`. The mode:
 *
 * - `nftables` needs kernel 5.13 (5.4 with the skip option; spec Appendix D) and an nft that
 *   works (it can list the kernel's tables); `iptables` needs iptables-restore.
 * - unset ('', upstream's default spelling) chooses nftables when both hold, else iptables,
 *   and logs the choice and why (upstream's default on Linux is iptables; the issue asks for
 *   nftables where the kernel can).
 * - an explicit mode the node cannot run is a configuration error naming the file and the field
 *   (svc-node exits with EX_CONFIG): nothing silently falls back from what was asked.
 *
 * Programs IPv6 too when the kernel has IPv6.
 */
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError } from '../config/config-error';
import type { HttpApiClient } from '../client/http-api-client';
import { IptablesWriter } from '../proxy/ipt-writer';
import { nftablesKernelProblem } from '../proxy/kernel';
import { ConntrackCommand, IptablesCommand, NftCommand, runCommand, systemTool } from '../proxy/nft-exec';
import type { Family } from '../proxy/nft-model';
import { NftWriter } from '../proxy/nft-writer';
import { Proxier } from '../proxy/proxier';
import { proxyMetrics } from '../proxy/proxy-metrics';
import type { RuleWriter } from '../proxy/rule-writer';
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
  /** Whether nft at this path can talk to the kernel (`nft list tables` succeeds). Never rejects. */
  nftWorks(path: string): Promise<boolean>;
  /** iptables-restore's path, or undefined when the system has none. */
  iptablesPath(): string | undefined;
}

const absolute = (p: string) => (p.startsWith('/') ? p : undefined);

export const realProxyHost: ProxyHost = {
  osRelease: () => readFileSync('/proc/sys/kernel/osrelease', 'utf8'),
  hasIPv6: () => existsSync('/proc/net/if_inet6'),
  env: process.env,
  nftPath: () => absolute(systemTool('nft')),
  nftWorks: (path) => runCommand(path, ['list', 'tables']).then((r) => r.code === 0, () => false),
  iptablesPath: () => absolute(systemTool('iptables-restore')),
};

export type ProxyMode = 'nftables' | 'iptables';

/** Why nftables cannot run here, or undefined when it can. */
async function nftablesProblem(ctx: AgentContext, host: ProxyHost): Promise<string | undefined> {
  let release: string;
  try {
    release = host.osRelease();
  } catch (e) {
    release = `unreadable: ${(e as Error).message}`;
  }
  const skip = ctx.cfg.config.proxy.skipKernelVersionCheck || (host.env.KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK ?? '') !== '';
  const kernel = nftablesKernelProblem(release, skip);
  if (kernel) return kernel;
  const nft = host.nftPath();
  if (!nft) return 'no nft binary in /usr/sbin, /sbin, /usr/bin, /bin or /usr/local/sbin (install nftables)';
  if (!(await host.nftWorks(nft))) return `${nft} cannot reach the kernel's nftables (\`nft list tables\` failed)`;
  return undefined;
}

const NO_IPTABLES = 'no iptables-restore in /usr/sbin, /sbin, /usr/bin, /bin or /usr/local/sbin (install iptables)';

/**
 * The mode to run: the configured one when the node can run it (else a ConfigError naming where
 * proxy.mode was set), or the chosen one; undefined (with the reason logged) when nothing can run.
 */
export async function chooseProxyMode(ctx: AgentContext, host: ProxyHost): Promise<ProxyMode | undefined> {
  const { cfg, log } = ctx;
  const mode = cfg.config.proxy.mode;
  const plog = log.child({ component: 'proxy' });
  const refuse = (why: string) => ConfigError.single(cfg.fieldSource?.('proxy.mode') ?? 'configuration', `"${mode}" cannot run on this node: ${why}`, 'proxy.mode');
  if (mode === 'nftables') {
    const problem = await nftablesProblem(ctx, host);
    if (problem) throw refuse(`${problem}; set proxy.mode: iptables, or leave it unset to choose`);
    return 'nftables';
  }
  if (mode === 'iptables') {
    if (!host.iptablesPath()) throw refuse(NO_IPTABLES);
    return 'iptables';
  }
  const problem = await nftablesProblem(ctx, host);
  if (!problem) {
    plog.info({ mode: 'nftables' }, 'proxy.mode unset: nftables chosen (the kernel allows it and nft works)');
    return 'nftables';
  }
  if (host.iptablesPath()) {
    plog.info({ mode: 'iptables', why: problem }, 'proxy.mode unset: iptables chosen, as nftables cannot run here');
    return 'iptables';
  }
  plog.error({ error: `${problem}; ${NO_IPTABLES}` }, 'network proxy not started: neither nftables nor iptables can run here; set proxy.mode: disabled if this node does not need it');
  return undefined;
}

/**
 * Removes the other mode's rules (a previous run's, before the chosen mode changed: a kernel
 * upgrade, nft installed or removed, proxy.mode edited), then runs the proxy: both modes' rules
 * at once would each DNAT Services. Best effort: a failure is logged and the proxy runs anyway.
 */
export async function runAfterLeftovers(other: RuleWriter | undefined, log: AgentContext['log'], run: () => Promise<void>): Promise<void> {
  if (other) {
    try {
      await other.cleanUp();
    } catch (err) {
      log.warn({ err }, 'removing the other proxy mode\'s rules failed');
    }
  }
  await run();
}

/** What the proxy will run: the chosen mode's writer, and the other mode's (for its leftovers). */
export interface ProxyPlan {
  mode: ProxyMode;
  families: Family[];
  writer: RuleWriter;
  other?: RuleWriter;
}

/**
 * Decides, before the node registers, whether and how the proxy runs: undefined when it is
 * disabled or cannot run (said in the log); rejects with a ConfigError for an explicit mode the
 * node cannot run, so a misconfigured node stops before it joins the cluster.
 */
export async function planProxy(ctx: AgentContext, host: ProxyHost = realProxyHost): Promise<ProxyPlan | undefined> {
  const { cfg, log } = ctx;
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
  const mode = await chooseProxyMode(ctx, host);
  if (!mode) return undefined;
  const families: Family[] = host.hasIPv6() ? ['ip', 'ip6'] : ['ip'];
  const rules = { clusterCIDRs: c.clusterCIDR === '' ? [] : c.clusterCIDR.split(',').map((s) => s.trim()), masqueradeAll: c.masqueradeAll };
  const nft = host.nftPath();
  const nftWriter = nft ? new NftWriter(new NftCommand([nft]), families, rules) : undefined;
  const iptWriter = host.iptablesPath() ? new IptablesWriter(new IptablesCommand(), families, rules) : undefined;
  const [writer, other] = mode === 'nftables' ? [nftWriter!, iptWriter] : [iptWriter!, nftWriter];
  return { mode, families, writer, ...(other ? { other } : {}) };
}

/** Starts the planned proxy; resolves it (for the health check), or undefined without a plan. */
export function startProxy(ctx: AgentContext, client: HttpApiClient, plan: ProxyPlan | undefined): Proxier | undefined {
  if (!plan) return undefined;
  const { cfg, log, signal, clock, running, metrics } = ctx;
  const plog = log.child({ component: 'proxy' });
  const proxier = new Proxier({
    client,
    nodeName: cfg.nodeName,
    clock,
    log: plog,
    writer: plan.writer,
    conntrack: new ConntrackCommand(),
    minSyncPeriodMs: cfg.config.proxy.minSyncPeriod,
    observer: proxyMetrics(metrics.registry),
  });
  running.loops.push(runAfterLeftovers(plan.other, plog, () => proxier.run(signal)));
  plog.info({ mode: plan.mode, families: plan.families }, 'network proxy started');
  return proxier;
}
