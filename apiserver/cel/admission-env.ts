import { CelCompileError, CelEnvironment, type CelProgram } from './program';

/**
 * The CEL environments of admission (upstream k8s.io/apiserver/pkg/admission/plugin/cel): webhook
 * matchConditions read object, oldObject and request; ValidatingAdmissionPolicy expressions also
 * params, namespaceObject and variables. Where we differ: `authorizer` is not offered (an
 * expression naming it is refused at compile time: "undeclared reference to 'authorizer'"), and
 * types are checked when evaluated (a non-bool result is an error) rather than at compile time.
 */

const MATCH_VARIABLES = ['object', 'oldObject', 'request'] as const;
export const POLICY_VARIABLES = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables'] as const;

let matchEnv: CelEnvironment | undefined;
let policyEnv: CelEnvironment | undefined;
let mutatingEnv: CelEnvironment | undefined;

/** The webhook matchConditions environment. */
export function matchConditionEnv(): CelEnvironment {
  matchEnv ??= new CelEnvironment({ variables: MATCH_VARIABLES });
  return matchEnv;
}

/** The ValidatingAdmissionPolicy environment (also its matchConditions, as upstream lets them read params). */
export function policyCelEnv(): CelEnvironment {
  policyEnv ??= new CelEnvironment({ variables: POLICY_VARIABLES });
  return policyEnv;
}

/** The MutatingAdmissionPolicy environment: the policy variables plus Object / JSONPatch literals and jsonpatch.escapeKey. */
export function mutatingPolicyCelEnv(): CelEnvironment {
  mutatingEnv ??= new CelEnvironment({ variables: POLICY_VARIABLES, objectLiterals: true });
  return mutatingEnv;
}

/** A cache of compiled programs by source: policies and hooks are evaluated on every write. */
export class ProgramCache {
  private readonly programs = new Map<string, CelProgram | CelCompileError>();
  constructor(private readonly env: () => CelEnvironment) {}

  /** The program, or the compile error (kept, so a bad expression is not compiled again per request). */
  get(source: string): CelProgram | CelCompileError {
    let p = this.programs.get(source);
    if (!p) {
      try {
        p = this.env().compile(source);
      } catch (err) {
        if (!(err instanceof CelCompileError)) throw err;
        p = err;
      }
      if (this.programs.size > 10_000) this.programs.clear();
      this.programs.set(source, p);
    }
    return p;
  }
}

/** The compile error of a matchCondition expression, or undefined (validation of webhook configurations). */
export function matchConditionCompileError(source: string): string | undefined {
  try {
    matchConditionEnv().compile(source);
    return undefined;
  } catch (err) {
    if (err instanceof CelCompileError) return err.message;
    throw err;
  }
}

/** The compile error of a policy expression (of a MutatingAdmissionPolicy with mutating), or undefined. */
export function policyCompileError(source: string, mutating = false): string | undefined {
  try {
    (mutating ? mutatingPolicyCelEnv() : policyCelEnv()).compile(source);
    return undefined;
  } catch (err) {
    if (err instanceof CelCompileError) return err.message;
    throw err;
  }
}

/**
 * A JSON value as CEL input: integral numbers become CEL ints (bigint), as upstream decodes
 * integer JSON into int64; other numbers stay doubles. Without this `object.spec.replicas + 1`
 * would be a double plus an int, which CEL refuses.
 */
export function celInput(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(celInput);
  if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = celInput(x);
    return out;
  }
  return v;
}
