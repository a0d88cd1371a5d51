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
