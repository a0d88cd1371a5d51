/**
 * The bridge CNI configuration svc-node writes for its Node's podCIDR(s) when the CNI config
 * directory holds none of the cluster's own (issue 24 item 5; upstream's kubenet made the same
 * network in-process: a bridge with host-local IPAM on the podCIDR, portmap for hostPort).
 *
 * Ours is told from theirs by name: the file is `10-svc-node.conflist` and the network inside is
 * `svc-node-pods`. Any other file the runtime would load (libcni's ConfFiles: `.conf`,
 * `.conflist`, `.json`) is the cluster's own CNI: then nothing is written and ours is removed, so
 * the runtime (which loads the first file by name) uses theirs.
 *
 * Loopback: the CRI runtimes set up `lo` themselves (containerd's CRI runs the loopback plugin
 * as a network of its own before the pod network), so the chain holds no loopback entry; the
 * loopback plugin chained after bridge would act on eth0, not lo.
 */
import { isIP } from 'node:net';

export const CNI_CONFIG_FILE = '10-svc-node.conflist';
export const CNI_NETWORK_NAME = 'svc-node-pods';
/** The bridge on the node (flannel's name for its bridge; kubenet used cbr0). */
export const CNI_BRIDGE = 'cni0';
/** libcni's ConfFiles extensions: a file with one of these in the directory is a network config. */
const CNI_EXTENSIONS = ['.conf', '.conflist', '.json'];

export interface PodNetworkConfigOptions {
  /** The Node's spec.podCIDRs (one per family), e.g. ["10.244.1.0/24"]. */
  podCIDRs: readonly string[];
  /** host-local's dataDir (where it records the addresses it gave). */
  ipamDataDir: string;
  bridge?: string;
}

/** The conflist text (JSON, newline-terminated) for the podCIDRs; throws on a malformed CIDR. */
export function podNetworkConflist(o: PodNetworkConfigOptions): string {
  if (o.podCIDRs.length === 0) throw new Error('no podCIDR to configure the pod network with');
  const ranges = o.podCIDRs.map((cidr) => {
    const [ip, bits] = cidr.split('/');
    const family = isIP(ip ?? '');
    if (family === 0 || !/^\d{1,3}$/.test(bits ?? '') || Number(bits) > (family === 4 ? 32 : 128)) throw new Error(`invalid podCIDR ${JSON.stringify(cidr)}`);
    return { family, range: [{ subnet: cidr }] };
  });
  const conf = {
    cniVersion: '0.4.0',
    name: CNI_NETWORK_NAME,
    plugins: [
      {
        type: 'bridge',
        bridge: o.bridge ?? CNI_BRIDGE,
        isGateway: true,
        // No masquerade: the bridge plugin would hide the source of pod-to-pod traffic across
        // nodes too (it masquerades everything leaving its own subnet); pods keep their address.
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: ranges.map((r) => r.range),
          routes: ranges.map((r) => ({ dst: r.family === 4 ? '0.0.0.0/0' : '::/0' })),
          dataDir: o.ipamDataDir,
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
  return JSON.stringify(conf, null, 2) + '\n';
}

/** Whether a directory entry is a network config the runtime would load. */
export function isCniConfigName(name: string): boolean {
  return !name.startsWith('.') && CNI_EXTENSIONS.some((ext) => name.endsWith(ext));
}

/** The cluster's own configs among a directory's entries (everything the runtime loads but ours). */
export function foreignConfigs(entries: readonly string[]): string[] {
  return entries.filter((n) => isCniConfigName(n) && n !== CNI_CONFIG_FILE).sort();
}
