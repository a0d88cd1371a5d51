/**
 * Start-up phase: NetworkPolicy enforcement (agent/netpol/), unless `networkPolicy.mode:
 * disabled` (nodes whose network plugin enforces policies itself). Not on the CRI simulator: its
 * pods have no network, and the host's rules stay untouched. Uses the proxy's nft runner.
 */
import type { HttpApiClient } from '../client/http-api-client';
import { NetworkPolicyController } from '../netpol/controller';
import { NftCommand } from '../proxy/nft-exec';
import type { AgentContext } from './context';

/** Starts the controller when configured; resolves it, or undefined. */
export function startNetworkPolicy(ctx: AgentContext, client: HttpApiClient): NetworkPolicyController | undefined {
  const { cfg, log, signal, clock, running } = ctx;
  const c = cfg.config.networkPolicy;
  const nlog = log.child({ component: 'netpol' });
  if (c.mode === 'disabled') {
    nlog.info({}, 'network policy enforcement disabled (networkPolicy.mode: disabled)');
    return undefined;
  }
  if (cfg.config.containerRuntimeEndpoint.startsWith('sim://')) {
    nlog.info({}, 'network policy enforcement not started: the CRI simulator\'s pods have no network');
    return undefined;
  }
  const controller = new NetworkPolicyController({ client, nodeName: cfg.nodeName, clock, log: nlog, nft: new NftCommand(), minSyncPeriodMs: c.minSyncPeriod });
  running.loops.push(controller.run(signal));
  nlog.info({ mode: c.mode }, 'network policy enforcement started');
  return controller;
}
