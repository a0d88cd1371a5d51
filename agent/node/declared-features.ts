/**
 * Node.status.declaredFeatures (alpha, spec 2.7): the node-level features this agent has turned
 * on, so the control plane can place pods that need them. Only gates that change what a pod may
 * rely on from the node are declared; operational gates (SystemdWatchdog, graceful shutdown) are not.
 */
import type { FeatureGates, FeatureName } from '../config/feature-gates';

const declarable: readonly FeatureName[] = ['ContainerCheckpoint', 'InPlacePodVerticalScaling', 'NodeSwap', 'SidecarContainers'];

/** The enabled declarable gates, sorted (a stable list keeps status patches quiet). */
export function declaredFeatures(gates: Pick<FeatureGates, 'enabled'>): string[] {
  return declarable.filter((f) => gates.enabled(f)).sort();
}
