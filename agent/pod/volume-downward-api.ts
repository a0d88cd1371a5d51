/**
 * The downward API as files (downwardAPI volumes and projected downwardAPI sources), as
 * upstream's downwardapi volume plugin: fieldRef metadata.name, namespace, uid, labels,
 * annotations (whole maps as sorted key="value" lines, or one key with metadata.labels['k']),
 * and resourceFieldRef of a named container (limits/requests of cpu, memory, ephemeral-storage,
 * rounded up in units of the divisor; a limit that is not set is the node's allocatable, as
 * upstream's MergeContainerResourceLimits). Values are read from the pod at each sync, so label
 * and annotation changes reach the files.
 *
 * Difference: values are quoted as JSON strings where upstream uses Go's %q; they agree for
 * printable ASCII and differ only in how other characters are escaped.
 */
import { parseQuantity } from '../config/quantity';
import type { FileToWrite } from './atomic-writer';
import type { Container, Pod } from '../api/core-v1';
import { InvalidArgumentError } from '../errors';

export interface DownwardApiItem {
  path: string;
  fieldRef?: { apiVersion?: string; fieldPath: string };
  resourceFieldRef?: { containerName?: string; resource: string; divisor?: string | number };
  mode?: number;
}

/** The node's allocatable, the value of a limit a container does not set. */
export interface NodeAllocatable {
  cpuMilli: number;
  memory: number;
  ephemeralStorage?: number;
}

/** A field or resource the downward API does not offer, or a container that does not exist. */
export class DownwardApiError extends InvalidArgumentError {
  override readonly name = 'DownwardApiError';
  override readonly code = 'SVC_NODE_ERR_DOWNWARD_API';
}

/** Upstream fieldpath.FormatMap: one key="value" line per entry, sorted by key. */
export function formatMap(m: Record<string, string> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(m![k])}`)
    .join('\n');
}

/** Upstream ExtractFieldPathAsString over the fields a volume may use. */
export function fieldValue(pod: Pod, fieldPath: string): string {
  const meta = pod.metadata;
  const subscript = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (subscript) return (subscript[1] === 'labels' ? meta.labels : meta.annotations)?.[subscript[2]] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'metadata.labels':
      return formatMap(meta.labels);
    case 'metadata.annotations':
      return formatMap(meta.annotations);
  }
  throw new DownwardApiError(`unsupported fieldPath: ${fieldPath}`);
}

function quantityOf(v: string | number | undefined): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number') return v;
  try {
    return parseQuantity(v);
  } catch {
    throw new DownwardApiError(`invalid quantity ${JSON.stringify(v)}`);
  }
}

/** Upstream ExtractContainerResourceValue: the value divided by the divisor, rounded up, as an integer string. */
export function resourceValue(pod: Pod, ref: NonNullable<DownwardApiItem['resourceFieldRef']>, node: NodeAllocatable): string {
  const containers: Container[] = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  const c = containers.find((x) => x.name === (ref.containerName ?? ''));
  if (!c) throw new DownwardApiError(`container ${JSON.stringify(ref.containerName ?? '')} not found in the pod`);
  const divisor = quantityOf(ref.divisor) || 1;
  const [kind, resource] = ref.resource.split('.', 2) as [string, string | undefined];
  if ((kind !== 'limits' && kind !== 'requests') || !resource) throw new DownwardApiError(`unsupported container resource: ${ref.resource}`);
  const set = quantityOf((kind === 'limits' ? c.resources?.limits : c.resources?.requests)?.[resource]);
  let value: number;
  switch (resource) {
    case 'cpu': {
      const allocatable = kind === 'limits' ? node.cpuMilli / 1000 : 0;
      // In millicores, as upstream divides MilliValues, so "250m" over divisor "1m" is exactly 250.
      const milli = Math.ceil((set ?? allocatable) * 1000 - 1e-9);
      const divMilli = Math.ceil(divisor * 1000 - 1e-9) || 1;
      return String(Math.ceil(milli / divMilli));
    }
    case 'memory':
      value = set ?? (kind === 'limits' ? node.memory : 0);
      break;
    case 'ephemeral-storage':
      value = set ?? (kind === 'limits' ? (node.ephemeralStorage ?? 0) : 0);
      break;
    default:
      if (!resource.startsWith('hugepages-')) throw new DownwardApiError(`unsupported container resource: ${ref.resource}`);
      value = set ?? 0;
  }
  return String(Math.ceil(Math.ceil(value) / divisor - 1e-9));
}

/** The files of a downwardAPI item list; item mode or the volume's default mode. */
export function downwardApiFiles(pod: Pod, items: DownwardApiItem[] | undefined, defaultMode: number, node: NodeAllocatable): FileToWrite[] {
  return (items ?? []).map((it) => {
    let text: string;
    if (it.fieldRef) text = fieldValue(pod, it.fieldRef.fieldPath);
    else if (it.resourceFieldRef) text = resourceValue(pod, it.resourceFieldRef, node);
    else throw new DownwardApiError(`item ${JSON.stringify(it.path)} names neither fieldRef nor resourceFieldRef`);
    return { path: it.path, data: Buffer.from(text, 'utf8'), mode: it.mode ?? defaultMode };
  });
}
