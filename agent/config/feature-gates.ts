/**
 * The agent's feature gates: which exist, their stage and default, and how overrides from the
 * config file and --feature-gates are checked (common/feature-gates.ts, shared with svc-apiserver).
 */

import { FeatureGateSpecs, parseFeatureGatesFlag, type FeatureSpec } from '../../common/feature-gates';
import { parseGoBool } from '../../common/query-bool';

export type { FeatureSpec, FeatureStage } from '../../common/feature-gates';

/** Gates the agent reads. Stages and defaults match the spec (4.11, 9.4, Appendix D) and upstream at 1.33. */
export const knownFeatures = {
  ContainerCheckpoint: { stage: 'BETA', default: true },
  GracefulNodeShutdown: { stage: 'BETA', default: true },
  GracefulNodeShutdownBasedOnPodPriority: { stage: 'BETA', default: true },
  InPlacePodVerticalScaling: { stage: 'BETA', default: true },
  KubeletInUserNamespace: { stage: 'ALPHA', default: false },
  NodeSwap: { stage: 'BETA', default: true },
  SystemdWatchdog: { stage: 'BETA', default: true },
  DevicePluginCDIDevices: { stage: 'GA', default: true, lockToDefault: true },
  SidecarContainers: { stage: 'GA', default: true, lockToDefault: true },
} as const satisfies Record<string, FeatureSpec>;

export type FeatureName = keyof typeof knownFeatures;

const specs = new FeatureGateSpecs<FeatureName>(knownFeatures);

export function isKnownFeature(name: string): name is FeatureName {
  return specs.isKnown(name);
}

/** Checks one override; returns the error text (upstream's wording) or undefined when it may be applied. */
export function checkFeatureGate(name: string, value: boolean): string | undefined {
  return specs.check(name, value);
}

/** Warnings upstream prints for GA and deprecated gates that are set explicitly. */
export function featureGateWarnings(overrides: Record<string, boolean>): string[] {
  return specs.warnings(overrides);
}

/** Go's strconv.ParseBool, which --feature-gates values go through upstream (shared with the query parameters). */
export { parseFeatureGatesFlag, parseGoBool };

/** The resolved set of gates the agent runs with. */
export class FeatureGates {
  private readonly values: Record<FeatureName, boolean>;

  /** `overrides` must already be checked with checkFeatureGate. */
  constructor(overrides: Record<string, boolean> = {}) {
    this.values = specs.resolve(overrides);
  }

  /** Whether the gate is on. */
  enabled(name: FeatureName): boolean {
    return this.values[name];
  }

  /** Every known gate with its effective value, for logs and declaredFeatures. */
  snapshot(): Record<FeatureName, boolean> {
    return { ...this.values };
  }
}
