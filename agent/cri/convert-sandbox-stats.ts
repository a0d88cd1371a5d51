/**
 * ListPodSandboxStats between the agent's camelCase shapes (./stats-types) and the wire (Linux
 * stats only: svc-node runs on Linux). The CPU and memory messages are those of a container's
 * stats, converted as ./convert-runtime converts them; unset UInt64Value wrappers stay unset.
 */
import { compact, map, msToNs, nsToMs, str, uint64ValueFromWire, uint64ValueToWire } from './convert-common';
import { statsFromWire, statsToWire } from './convert-runtime';
import { sandboxMetadataFromWire, sandboxMetadataToWire } from './convert-sandbox';
import type { InterfaceUsage, PodSandboxStats, PodSandboxStatsFilter } from './types';
import type { Opt, WInterfaceUsage, WPodSandboxStats, WPodSandboxStatsFilter } from './wire-types';

function interfaceToWire(i: InterfaceUsage): WInterfaceUsage {
  return { name: i.name, rx_bytes: uint64ValueToWire(i.rxBytes), rx_errors: uint64ValueToWire(i.rxErrors), tx_bytes: uint64ValueToWire(i.txBytes), tx_errors: uint64ValueToWire(i.txErrors) };
}

function interfaceFromWire(w: WInterfaceUsage): InterfaceUsage {
  const out: InterfaceUsage = { name: str(w.name) };
  const set = (k: keyof Omit<InterfaceUsage, 'name'>, v: number | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  set('rxBytes', uint64ValueFromWire(w.rx_bytes));
  set('rxErrors', uint64ValueFromWire(w.rx_errors));
  set('txBytes', uint64ValueFromWire(w.tx_bytes));
  set('txErrors', uint64ValueFromWire(w.tx_errors));
  return out;
}

export function sandboxStatsToWire(s: PodSandboxStats): WPodSandboxStats {
  // A container's stats carry the same CPU and memory messages.
  const usage = statsToWire({ id: s.id, metadata: { name: '', attempt: 0 }, labels: {}, annotations: {}, ...(s.cpu ? { cpu: s.cpu } : {}), ...(s.memory ? { memory: s.memory } : {}) });
  return {
    attributes: { id: s.id, metadata: sandboxMetadataToWire(s.metadata), labels: s.labels, annotations: s.annotations },
    linux: {
      cpu: usage.cpu,
      memory: usage.memory,
      network: s.network
        ? { timestamp: msToNs(s.network.timestamp), default_interface: s.network.defaultInterface ? interfaceToWire(s.network.defaultInterface) : undefined, interfaces: s.network.interfaces.map(interfaceToWire) }
        : undefined,
      process: s.process ? { timestamp: msToNs(s.process.timestamp), process_count: uint64ValueToWire(s.process.processCount) } : undefined,
      containers: s.containers.map(statsToWire),
    },
  };
}

export function sandboxStatsFromWire(w: WPodSandboxStats): PodSandboxStats {
  const a = w.attributes;
  const l = w.linux;
  const usage = statsFromWire({ cpu: l?.cpu ?? null, memory: l?.memory ?? null });
  const out: PodSandboxStats = {
    id: str(a?.id),
    metadata: sandboxMetadataFromWire(a?.metadata),
    labels: map(a?.labels),
    annotations: map(a?.annotations),
    containers: (l?.containers ?? []).map(statsFromWire),
  };
  if (usage.cpu) out.cpu = usage.cpu;
  if (usage.memory) out.memory = usage.memory;
  const n = l?.network;
  if (n) {
    out.network = { timestamp: nsToMs(n.timestamp), interfaces: (n.interfaces ?? []).map(interfaceFromWire) };
    if (n.default_interface) out.network.defaultInterface = interfaceFromWire(n.default_interface);
  }
  const p = l?.process;
  if (p) {
    out.process = { timestamp: nsToMs(p.timestamp) };
    const count = uint64ValueFromWire(p.process_count);
    if (count !== undefined) out.process.processCount = count;
  }
  return out;
}

export function sandboxStatsFilterToWire(f: PodSandboxStatsFilter): WPodSandboxStatsFilter {
  return { id: f.id, label_selector: f.labelSelector };
}

export function sandboxStatsFilterFromWire(w: Opt<WPodSandboxStatsFilter>): PodSandboxStatsFilter {
  if (!w) return {};
  return compact({ id: str(w.id), labelSelector: map(w.label_selector) });
}
