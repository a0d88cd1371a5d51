/** Picks the ContainerBehaviour rule for a new container (first rule whose selectors all match). */
import { normalizeImageRef } from './image-ref';
import type { ContainerBehaviour } from './sim-options';
import type { ContainerConfig, Image, PodSandboxMetadata } from './types';

function normalized(ref: string): string | undefined {
  try {
    return normalizeImageRef(ref);
  } catch {
    return undefined;
  }
}

/** Whether an image selector names the container's image: as written, normalised, a tag, or the ID. */
function sameImage(selector: string, asWritten: string, image: Image): boolean {
  if (selector === asWritten || selector === image.id) return true;
  const n = normalized(selector);
  return n !== undefined && (n === normalized(asWritten) || image.repoTags.includes(n));
}

export function behaviourFor(
  rules: readonly ContainerBehaviour[],
  config: ContainerConfig,
  pod: PodSandboxMetadata,
  image: Image,
): ContainerBehaviour {
  for (const b of rules) {
    if (b.image !== undefined && !sameImage(b.image, config.image.image, image)) continue;
    if (b.name !== undefined && b.name !== config.metadata.name) continue;
    if (b.podName !== undefined && b.podName !== pod.name) continue;
    if (b.podNamespace !== undefined && b.podNamespace !== pod.namespace) continue;
    return b;
  }
  return {};
}

/** Pod annotation: every container of the pod exits this many milliseconds after it starts (tests of run-to-completion pods on real agents). */
export const EXIT_AFTER_ANNOTATION = 'sim.svc.io/exit-after-ms';
/** Pod annotation: the exit code of those exits (default 0). */
export const EXIT_CODE_ANNOTATION = 'sim.svc.io/exit-code';

/**
 * The behaviour with the pod's exit annotations applied: a way for pods sent through the API to an
 * agent running the simulator in its own process (no behaviour rules reach it) to run to
 * completion, as a Job's pods must. A malformed value fails container creation, naming it.
 */
export function withPodExit(b: ContainerBehaviour, annotations: Readonly<Record<string, string>> | undefined): ContainerBehaviour {
  const after = annotations?.[EXIT_AFTER_ANNOTATION];
  if (after === undefined) return b;
  const code = annotations?.[EXIT_CODE_ANNOTATION] ?? '0';
  if (!/^\d+$/.test(after) || !Number.isSafeInteger(Number(after))) return { ...b, createError: `annotation ${EXIT_AFTER_ANNOTATION}=${JSON.stringify(after)}: must be a number of milliseconds` };
  if (!/^\d+$/.test(code) || Number(code) > 255) return { ...b, createError: `annotation ${EXIT_CODE_ANNOTATION}=${JSON.stringify(code)}: must be an exit code 0-255` };
  return { ...b, exitAfterMs: Number(after), exitCode: Number(code) };
}

/**
 * Pod annotations: the simulated usage of the pod's containers while they run, for agents running
 * the simulator in their own process (kubectl top, the HPA under load). Either one value for every
 * container ("250") or per container ("app=250,sidecar=10"); containers not named keep the rule's
 * or the default usage. CPU in millicores, memory in bytes (a Ki/Mi/Gi suffix is accepted).
 */
export const CPU_MILLICORES_ANNOTATION = 'sim.svc.io/cpu-millicores';
export const MEMORY_BYTES_ANNOTATION = 'sim.svc.io/memory-bytes';

const BINARY_SUFFIX: Record<string, number> = { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** The value an annotation gives one container: undefined when it names others only; an error text when malformed. */
function usageValue(raw: string, container: string, unit: 'millicores' | 'bytes'): number | string | undefined {
  const entries = raw.split(',').map((e) => e.trim());
  let value: string | undefined;
  for (const e of entries) {
    const eq = e.indexOf('=');
    if (eq < 0 && entries.length === 1) value = e;
    else if (eq > 0 && e.slice(0, eq) === container) value = e.slice(eq + 1);
    else if (eq <= 0) return `must be a number of ${unit}, or name=value pairs separated by commas`;
  }
  if (value === undefined) return undefined;
  const m = unit === 'bytes' ? /^(\d+)(Ki|Mi|Gi)?$/.exec(value) : /^(\d+)()$/.exec(value);
  if (!m) return `must be a number of ${unit}${unit === 'bytes' ? ' (Ki, Mi or Gi allowed)' : ''}`;
  const n = Number(m[1]) * BINARY_SUFFIX[m[2] ?? ''];
  return Number.isSafeInteger(n) ? n : `is too large`;
}

/** The behaviour with the pod's usage annotations applied for the named container; a malformed value fails container creation, naming it. */
export function withPodUsage(b: ContainerBehaviour, annotations: Readonly<Record<string, string>> | undefined, container: string): ContainerBehaviour {
  let out = b;
  const cpu = annotations?.[CPU_MILLICORES_ANNOTATION];
  if (cpu !== undefined) {
    const v = usageValue(cpu, container, 'millicores');
    if (typeof v === 'string') return { ...b, createError: `annotation ${CPU_MILLICORES_ANNOTATION}=${JSON.stringify(cpu)}: ${v}` };
    if (v !== undefined) out = { ...out, cpuNanoCores: v * 1_000_000 };
  }
  const mem = annotations?.[MEMORY_BYTES_ANNOTATION];
  if (mem !== undefined) {
    const v = usageValue(mem, container, 'bytes');
    if (typeof v === 'string') return { ...b, createError: `annotation ${MEMORY_BYTES_ANNOTATION}=${JSON.stringify(mem)}: ${v}` };
    if (v !== undefined) out = { ...out, memoryBytes: v };
  }
  return out;
}
