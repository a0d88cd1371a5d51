/**
 * A node agent's /stats/summary answer read into usage, as metrics-server's summary source did:
 * CPU is usageNanoCores, memory the working set; a container (and with it its pod) without both
 * is left out, and so is a node without both, since a partial reading would make averages lie.
 */
import type { ContainerUsage, NodeScrape, PodUsage } from './usage-cache';

interface Reading {
  cpu?: { time?: string; usageNanoCores?: number };
  memory?: { time?: string; workingSetBytes?: number };
}

interface SummaryJson {
  node?: Reading;
  pods?: Array<Reading & { podRef?: { name?: string; namespace?: string }; containers?: Array<Reading & { name?: string }> }>;
}

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

function timeOf(r: Reading, fallbackMs: number): number {
  const t = Date.parse(r.cpu?.time ?? '');
  return Number.isFinite(t) ? t : fallbackMs;
}

/** Reads a summary; throws naming what is wrong when it is not one. */
export function usageFromSummary(body: unknown, nowMs: number, windowMs: number): NodeScrape {
  if (!body || typeof body !== 'object' || !('node' in body)) throw new Error('the answer is not a stats summary (no node)');
  const s = body as SummaryJson;
  const pods = new Map<string, PodUsage>();
  for (const p of s.pods ?? []) {
    const { name, namespace } = p.podRef ?? {};
    if (!name || !namespace) continue;
    const containers: ContainerUsage[] = [];
    let complete = (p.containers ?? []).length > 0;
    for (const c of p.containers ?? []) {
      if (!c.name || !num(c.cpu?.usageNanoCores) || !num(c.memory?.workingSetBytes)) {
        complete = false;
        break;
      }
      containers.push({ name: c.name, cpuNanoCores: c.cpu.usageNanoCores, memoryBytes: c.memory.workingSetBytes });
    }
    if (complete) pods.set(`${namespace}/${name}`, { timestampMs: timeOf(p.containers![0], nowMs), windowMs, containers });
  }
  const n = s.node ?? {};
  const node = num(n.cpu?.usageNanoCores) && num(n.memory?.workingSetBytes) ? { timestampMs: timeOf(n, nowMs), windowMs, cpuNanoCores: n.cpu.usageNanoCores, memoryBytes: n.memory.workingSetBytes } : undefined;
  return { ...(node ? { node } : {}), pods };
}
