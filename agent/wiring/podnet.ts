/**
 * Start-up phase: the pod network (agent/podnet/). Its CNI config in cniConfDir and the routes to
 * the other nodes' podCIDRs (configurePodCIDRRoutes), from the Node objects. Not with the
 * `sim://` simulator: it makes no network, and an agent on it must not touch the host's.
 */
import path from 'node:path';
import type { ApiClient } from '../client/api-client';
import { CniConfigWriter, ensureBridgeNetfilter, PodNetwork, realBridgeNetfilterHost, RouteTable, type BridgeNetfilterHost } from '../podnet';
import type { AgentContext } from './context';

export function startPodNetwork(ctx: AgentContext, p: { client: ApiClient; hostIPs: () => string[] }): void {
  const { cfg, log, signal, clock, running } = ctx;
  const c = cfg.config;
  if (c.containerRuntimeEndpoint.startsWith('sim://')) return;
  const net = new PodNetwork({
    client: p.client,
    nodeName: cfg.nodeName,
    selfIPs: p.hostIPs,
    // host-local's records under the agent's root dir, not the shared /var/lib/cni/networks.
    cni: new CniConfigWriter({ confDir: c.cniConfDir, ipamDataDir: path.join(cfg.flags.rootDir, 'cni', 'networks') }),
    routes: c.configurePodCIDRRoutes ? new RouteTable() : undefined,
    clock,
    log: log.child({ component: 'pod-network' }),
  });
  running.loops.push(net.run(signal));
}

/** With the proxy or NetworkPolicy enforcement on: bridged pod traffic through their rules (br_netfilter, as k3s's agent sets up). */
export async function ensureBridgedTrafficFiltered(ctx: AgentContext, host: BridgeNetfilterHost = realBridgeNetfilterHost): Promise<void> {
  await ensureBridgeNetfilter(host, ctx.log.child({ component: 'pod-network' }));
}
