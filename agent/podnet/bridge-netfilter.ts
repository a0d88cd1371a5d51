/**
 * Bridged pod traffic through the IP netfilter hooks (br_netfilter). Two pods of one node talk
 * across the node's bridge without being routed, so the proxy's rules (the DNAT of a cluster IP
 * whose endpoint is on the same bridge, and the reverse translation of its replies) and the
 * NetworkPolicy forward chain see that traffic only when the bridge hands it to the ip/ip6 hooks:
 * `net.bridge.bridge-nf-call-iptables` (and `-ip6tables`) = 1, which exist once the br_netfilter
 * module is loaded. Without them a pod cannot reach a Service whose chosen endpoint shares its
 * node (the reply comes back from the pod's own address and is refused), and policies do not
 * apply between pods of one node.
 *
 * k3s's agent loads the module and sets both at start (its syssetup), as kubenet did; kube-proxy
 * alone only warns ("Missing br-netfilter module or unset sysctl br-nf-call-iptables"). svc-node,
 * which embeds the proxy and the policy enforcement as k3s does, does as k3s when either runs.
 * The settings belong to the agent's network namespace (per namespace since Linux 5.3).
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Log } from '../platform/logger';

export const BRIDGE_NF_SYSCTLS = ['/proc/sys/net/bridge/bridge-nf-call-iptables', '/proc/sys/net/bridge/bridge-nf-call-ip6tables'] as const;

/** What the check touches on the node. */
export interface BridgeNetfilterHost {
  /** The sysctl file's value, or undefined when it does not exist (module not loaded). */
  read(path: string): string | undefined;
  write(path: string, value: string): void;
  /** Loads br_netfilter (`modprobe br_netfilter`); rejects with why not. */
  loadModule(): Promise<void>;
}

export const realBridgeNetfilterHost: BridgeNetfilterHost = {
  read(path) {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return undefined;
    }
  },
  write: (path, value) => writeFileSync(path, value),
  loadModule: () =>
    new Promise((resolve, reject) => {
      execFile('modprobe', ['br_netfilter'], { timeout: 10_000, encoding: 'utf8' }, (err, _out, stderr) => (err ? reject(new Error(stderr.trim() || err.message)) : resolve()));
    }),
};

/**
 * Loads br_netfilter when its settings are missing and turns both on; resolves whether bridged
 * IPv4 traffic now crosses the hooks. Never rejects: what cannot be done is a warning (the agent
 * and its pods run on; only same-node Service traffic and policies are affected).
 */
export async function ensureBridgeNetfilter(host: BridgeNetfilterHost, log: Log): Promise<boolean> {
  const [ipv4, ipv6] = BRIDGE_NF_SYSCTLS;
  if (host.read(ipv4) === undefined) {
    try {
      await host.loadModule();
    } catch (e) {
      log.warn({ error: (e as Error).message }, 'cannot load br_netfilter: traffic between pods of this node bypasses the proxy and NetworkPolicy rules (Services whose endpoint is on this node may not answer its pods)');
      return false;
    }
  }
  let ok = true;
  for (const path of [ipv4, ipv6]) {
    const value = host.read(path);
    if (value === undefined || value === '1') {
      if (value === undefined && path === ipv4) ok = false;
      continue;
    }
    try {
      host.write(path, '1');
      log.info({ sysctl: path }, 'turned on bridged traffic through the IP netfilter hooks, for the proxy and NetworkPolicy rules');
    } catch (e) {
      if (path === ipv4) ok = false;
      log.warn({ sysctl: path, error: (e as Error).message }, 'cannot turn on bridged traffic through the IP netfilter hooks: traffic between pods of this node bypasses the proxy and NetworkPolicy rules');
    }
  }
  return ok;
}
