/**
 * The latest resource usage of every node and pod, as metrics-server keeps it: each node's scrape
 * replaces what that node reported before (pods it no longer reports are gone), and a node whose
 * scrape fails, or that is no longer scraped, reports nothing. Read by the metrics API handler and
 * the HPA controller of this process.
 */

export interface NodeUsage {
  /** When the usage was read (ms since the epoch). */
  timestampMs: number;
  /** The interval the CPU usage was averaged over (ms). */
  windowMs: number;
  cpuNanoCores: number;
  memoryBytes: number;
}

export interface ContainerUsage {
  name: string;
  cpuNanoCores: number;
  memoryBytes: number;
}

export interface PodUsage {
  timestampMs: number;
  windowMs: number;
  containers: ContainerUsage[];
}

/** One node's scrape: its own usage (absent when it reported none) and its pods' by "namespace/name". */
export interface NodeScrape {
  node?: NodeUsage;
  pods: ReadonlyMap<string, PodUsage>;
}

export class UsageCache {
  private readonly nodes = new Map<string, NodeScrape>();
  private readonly podNode = new Map<string, string>();

  /** Replaces what the node reported; undefined forgets it (a failed or skipped scrape). */
  set(nodeName: string, scrape: NodeScrape | undefined): void {
    const old = this.nodes.get(nodeName);
    for (const k of old?.pods.keys() ?? []) if (this.podNode.get(k) === nodeName) this.podNode.delete(k);
    if (!scrape) {
      this.nodes.delete(nodeName);
      return;
    }
    this.nodes.set(nodeName, scrape);
    for (const k of scrape.pods.keys()) this.podNode.set(k, nodeName);
  }

  /** Names of the nodes with a scrape. */
  nodeNames(): string[] {
    return [...this.nodes.keys()];
  }

  node(name: string): NodeUsage | undefined {
    return this.nodes.get(name)?.node;
  }

  pod(namespace: string, name: string): PodUsage | undefined {
    const key = `${namespace}/${name}`;
    const node = this.podNode.get(key);
    return node === undefined ? undefined : this.nodes.get(node)?.pods.get(key);
  }
}
