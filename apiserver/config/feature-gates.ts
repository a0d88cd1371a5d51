/**
 * svc-apiserver's feature gates (spec 9.4; upstream's names, stages and defaults at 1.33 unless
 * the spec says otherwise), in the framework both daemons share (common/feature-gates.ts). Each
 * gate here switches the behaviour it names:
 * - AllowUnsafeMalformedObjectDeletion: DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential.
 * - APIResponseCompression: gzip of large read responses.
 * - AuthorizeWithSelectors: field and label selectors passed to authorizers (the Node authorizer,
 *   webhooks). Beta and on as upstream since 1.32 (the spec's list calls it alpha, from 1.31).
 * - CBORServingAndStorage: application/cbor bodies and answers.
 * - DeclarativeValidation: the schema's rules compared with the hand-written validation on every
 *   write, mismatches counted (store/declarative-validation.ts).
 * - DeclarativeValidationTakeover: the schema's causes answer for the rules both state; switched
 *   off with DeclarativeValidation, as upstream.
 * - ListFromCacheSnapshot: lists at an exact older resourceVersion (resourceVersionMatch=Exact,
 *   continue tokens) answered from memory instead of the store, from versions of every key kept
 *   over the watch cache's window (store/list-snapshots.ts; upstream KEP-4988). Alpha and off as
 *   upstream 1.33 (beta and on in 1.34): it holds a copy of every stored object in memory.
 * - MutatingAdmissionPolicy: the MutatingAdmissionPolicy admission plugin (beta since 1.34, off by
 *   default as upstream; its admissionregistration v1alpha1/v1beta1 versions also need --runtime-config).
 * - StreamingList: watches with sendInitialEvents (upstream names this gate WatchList).
 * - StructuredAuthenticationConfiguration: --authentication-config.
 * - StructuredAuthorizationConfiguration: --authorization-config (GA upstream since 1.32: locked on).
 */
import { FeatureGateSpecs, parseFeatureGatesFlag, type FeatureSpec } from '../../common/feature-gates';

export const CBOR_GATE = 'CBORServingAndStorage';

export const apiServerFeatures = {
  AllowUnsafeMalformedObjectDeletion: { stage: 'ALPHA', default: false },
  APIResponseCompression: { stage: 'BETA', default: true },
  AuthorizeWithSelectors: { stage: 'BETA', default: true },
  [CBOR_GATE]: { stage: 'ALPHA', default: false },
  DeclarativeValidation: { stage: 'BETA', default: true },
  DeclarativeValidationTakeover: { stage: 'BETA', default: false },
  ListFromCacheSnapshot: { stage: 'ALPHA', default: false },
  MutatingAdmissionPolicy: { stage: 'BETA', default: false },
  StreamingList: { stage: 'BETA', default: true },
  StructuredAuthenticationConfiguration: { stage: 'BETA', default: true },
  StructuredAuthorizationConfiguration: { stage: 'GA', default: true, lockToDefault: true },
} as const satisfies Record<string, FeatureSpec>;

export type ApiServerFeature = keyof typeof apiServerFeatures;

export const apiServerGates = new FeatureGateSpecs<ApiServerFeature>(apiServerFeatures);

/** Whether a gate is on in a set of switched-on gates; no set at all (tests, tools) means every gate at its default. */
export function gateOn(gates: ReadonlySet<string> | undefined, name: ApiServerFeature): boolean {
  return gates ? gates.has(name) : apiServerFeatures[name].default;
}

/** --feature-gates' pairs: the gates switched on and the warnings to log, or the problem in upstream's words naming the pair. */
export function parseFeatureGatePairs(pairs: readonly string[]): { on: Set<string>; warnings: string[] } | { error: string } {
  const overrides: Record<string, boolean> = {};
  for (const p of pairs) {
    let parsed: Record<string, boolean>;
    try {
      parsed = parseFeatureGatesFlag(p);
    } catch (err) {
      return { error: `invalid argument "${p}" for --feature-gates: ${(err as Error).message}` };
    }
    for (const [name, value] of Object.entries(parsed)) {
      const why = apiServerGates.check(name, value);
      if (why) return { error: `invalid argument "${p}" for --feature-gates: ${why}` };
      overrides[name] = value;
    }
  }
  const values = apiServerGates.resolve(overrides);
  // Upstream: takeover means nothing without declarative validation running.
  if (!values.DeclarativeValidation) values.DeclarativeValidationTakeover = false;
  return { on: new Set(Object.entries(values).filter(([, v]) => v).map(([n]) => n)), warnings: apiServerGates.warnings(overrides) };
}
