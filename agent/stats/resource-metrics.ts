/**
 * GET /metrics/resource: the Summary's CPU and memory in the Prometheus text format with upstream's
 * metric names, help texts and labels (the kubelet's resource metrics collector, what
 * metrics-server scrapes): each sample carries the time it was read, in ms, as upstream's. A
 * summary that could not be read is a scrape error (resource_scrape_error 1, and its deprecated
 * twin scrape_error) with no other samples.
 */
import type { Summary } from './types';

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: string[];
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function labels(l: Record<string, string>): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/**
 * A value as Prometheus' Go text writer prints it: strconv.FormatFloat(v, 'g', -1, 64), shortest
 * digits, exponent form from 1e+06 and below 1e-04 (4.194304e+06 for a 4 MiB working set).
 */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return '0';
  const [mantissa, e] = v.toExponential().split('e');
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(v);
}

const ms = (rfc3339: string): number => Date.parse(rfc3339);

const family = (name: string, help: string, type: Family['type']): Family => ({ name, help: `[STABLE] ${help}`, type, samples: [] });

/** The exposition text for a summary, or for a failed read (summary undefined). */
export function renderResourceMetrics(s: Summary | undefined): string {
  const nodeCpu = family('node_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the node in core-seconds', 'counter');
  const nodeMem = family('node_memory_working_set_bytes', 'Current working set of the node in bytes', 'gauge');
  const cCpu = family('container_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the container in core-seconds', 'counter');
  const cMem = family('container_memory_working_set_bytes', 'Current working set of the container in bytes', 'gauge');
  const cStart = family('container_start_time_seconds', 'Start time of the container since unix epoch in seconds', 'gauge');
  const pCpu = family('pod_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the pod in core-seconds', 'counter');
  const pMem = family('pod_memory_working_set_bytes', 'Current working set of the pod in bytes', 'gauge');
  const err = family('resource_scrape_error', '1 if there was an error while getting container metrics, 0 otherwise', 'gauge');
  const oldErr = { ...family('scrape_error', '', 'gauge'), help: '[ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise' };
  const failed = s === undefined ? '1' : '0';
  err.samples.push(`resource_scrape_error ${failed}`);
  oldErr.samples.push(`scrape_error ${failed}`);
  if (s) {
    const n = s.node;
    if (n.cpu?.usageCoreNanoSeconds !== undefined) nodeCpu.samples.push(`${nodeCpu.name} ${goFloat(n.cpu.usageCoreNanoSeconds / 1e9)} ${ms(n.cpu.time)}`);
    if (n.memory?.workingSetBytes !== undefined) nodeMem.samples.push(`${nodeMem.name} ${goFloat(n.memory.workingSetBytes)} ${ms(n.memory.time)}`);
    for (const p of s.pods) {
      const pl = { namespace: p.podRef.namespace, pod: p.podRef.name };
      if (p.cpu?.usageCoreNanoSeconds !== undefined) pCpu.samples.push(`${pCpu.name}${labels(pl)} ${goFloat(p.cpu.usageCoreNanoSeconds / 1e9)} ${ms(p.cpu.time)}`);
      if (p.memory?.workingSetBytes !== undefined) pMem.samples.push(`${pMem.name}${labels(pl)} ${goFloat(p.memory.workingSetBytes)} ${ms(p.memory.time)}`);
      for (const c of p.containers) {
        const cl = labels({ container: c.name, ...pl });
        if (c.cpu?.usageCoreNanoSeconds !== undefined) cCpu.samples.push(`${cCpu.name}${cl} ${goFloat(c.cpu.usageCoreNanoSeconds / 1e9)} ${ms(c.cpu.time)}`);
        if (c.memory?.workingSetBytes !== undefined) cMem.samples.push(`${cMem.name}${cl} ${goFloat(c.memory.workingSetBytes)} ${ms(c.memory.time)}`);
        cStart.samples.push(`${cStart.name}${cl} ${goFloat(ms(c.startTime) / 1000)} ${ms(c.startTime)}`);
      }
    }
  }
  // Families in name order, as client_golang's registry gathers them; empty ones keep HELP and TYPE.
  const all = [cCpu, cMem, cStart, nodeCpu, nodeMem, pCpu, pMem, err, oldErr].sort((a, b) => a.name.localeCompare(b.name));
  return all.map((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...f.samples].join('\n') + '\n').join('');
}
