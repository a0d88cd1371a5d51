/**
 * The agent's feature gates: which exist, their stage and default, and how overrides from the
 * config file and --feature-gates are checked. Messages follow component-base/featuregate.
 */

import { parseGoBool } from '../../common/query-bool';

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  stage: FeatureStage;
  default: boolean;
  /** GA (or deprecated) gates that can no longer be changed from their default. */
  lockToDefault?: boolean;
}

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

export function isKnownFeature(name: string): name is FeatureName {
  return Object.prototype.hasOwnProperty.call(knownFeatures, name);
}

/** Checks one override; returns the error text (upstream's wording) or undefined when it may be applied. */
export function checkFeatureGate(name: string, value: boolean): string | undefined {
  if (!isKnownFeature(name)) return `unrecognized feature gate: ${name}`;
  const spec: FeatureSpec = knownFeatures[name];
  if (spec.lockToDefault && value !== spec.default) {
    return `cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`;
  }
  return undefined;
}

/** Warnings upstream prints for GA and deprecated gates that are set explicitly. */
export function featureGateWarnings(overrides: Record<string, boolean>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(overrides)) {
    if (!isKnownFeature(name)) continue;
    const spec: FeatureSpec = knownFeatures[name];
    if (spec.stage === 'GA') out.push(`Setting GA feature gate ${name}=${value}. It will be removed in a future release.`);
    if (spec.stage === 'DEPRECATED') out.push(`Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`);
  }
  return out;
}

/** Go's strconv.ParseBool, which --feature-gates values go through upstream (shared with the query parameters). */
export { parseGoBool };

/** Parses "A=true,B=false" (the --feature-gates flag); throws Error on malformed pairs. Does not check names. */
export function parseFeatureGatesFlag(text: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const raw of text.split(',')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq < 0) throw new Error(`missing bool value for ${pair}`);
    const name = pair.slice(0, eq).trim();
    const valueText = pair.slice(eq + 1).trim();
    const value = parseGoBool(valueText);
    if (value === undefined) throw new Error(`invalid value of ${name}=${valueText}, err: strconv.ParseBool: parsing ${JSON.stringify(valueText)}: invalid syntax`);
    out[name] = value;
  }
  return out;
}

/** The resolved set of gates the agent runs with. */
export class FeatureGates {
  private readonly values: Record<FeatureName, boolean>;

  /** `overrides` must already be checked with checkFeatureGate. */
  constructor(overrides: Record<string, boolean> = {}) {
    const values = {} as Record<FeatureName, boolean>;
    for (const name of Object.keys(knownFeatures) as FeatureName[]) {
      values[name] = overrides[name] ?? knownFeatures[name].default;
    }
    this.values = values;
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
