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
