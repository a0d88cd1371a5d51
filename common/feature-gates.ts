/**
 * Feature gates, as both daemons use them (upstream's component-base/featuregate): each gate has a
 * stage and a default; alpha gates are off and beta gates usually on by default, GA gates are
 * locked to true, and setting a GA or deprecated gate explicitly warns. `--feature-gates` takes
 * Name=bool pairs with Go's boolean spellings. Messages follow upstream's.
 */
import { parseGoBool } from './query-bool';

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  stage: FeatureStage;
  default: boolean;
  /** GA (or deprecated) gates that can no longer be changed from their default. */
  lockToDefault?: boolean;
}

/** The gates one daemon knows, and the checks and warnings over them. */
export class FeatureGateSpecs<N extends string> {
  constructor(readonly known: Readonly<Record<N, FeatureSpec>>) {}

  isKnown(name: string): name is N {
    return Object.prototype.hasOwnProperty.call(this.known, name);
  }

  /** Checks one override; returns the error text (upstream's wording) or undefined when it may be applied. */
  check(name: string, value: boolean): string | undefined {
    if (!this.isKnown(name)) return `unrecognized feature gate: ${name}`;
    const spec: FeatureSpec = this.known[name];
    if (spec.lockToDefault && value !== spec.default) return `cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`;
    return undefined;
  }

  /** Warnings upstream prints for GA and deprecated gates that are set explicitly. */
  warnings(overrides: Record<string, boolean>): string[] {
    const out: string[] = [];
    for (const [name, value] of Object.entries(overrides)) {
      if (!this.isKnown(name)) continue;
      const spec: FeatureSpec = this.known[name];
      if (spec.stage === 'GA') out.push(`Setting GA feature gate ${name}=${value}. It will be removed in a future release.`);
      if (spec.stage === 'DEPRECATED') out.push(`Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`);
    }
    return out;
  }

  /** Every gate with its value under the overrides (which must be checked already). */
  resolve(overrides: Record<string, boolean> = {}): Record<N, boolean> {
    const values = {} as Record<N, boolean>;
    for (const name of Object.keys(this.known) as N[]) values[name] = overrides[name] ?? this.known[name].default;
    return values;
  }

  /** `Name=true|false (STAGE - default=...)` lines for --help, as upstream lists its gates. */
  usage(): string {
    return (Object.keys(this.known) as N[])
      .sort()
      .map((n) => `${n}=true|false (${this.known[n].stage} - default=${this.known[n].default})`)
      .join(', ');
  }
}

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
