/**
 * Declarative validation next to the hand-written one (spec 9.4 and 6.2; upstream's KEP-5073,
 * k8s.io/apiserver/pkg/registry/rest ValidateDeclaratively and its comparison).
 *
 * Here every built-in kind has one schema (registry/types/, api/schema.ts) and hand-written
 * validate functions. The schema's causes are of two sorts:
 * - structural (JSON types, integer widths, quantity and date-time syntax): upstream's decoding
 *   errors, always authoritative; nothing else runs on an object that fails them;
 * - rules (required fields, enums, unique listType map keys, reasons FieldValueRequired,
 *   FieldValueNotSupported, FieldValueDuplicate): upstream's +k8s: tags, the declarative
 *   validation this file compares with the hand-written one.
 * svc has always enforced the schema's rules (before the hand-written validation, which then does
 * not run), and keeps doing so with every gate setting: the gates decide whether the two are
 * compared and which of them answers for the rules both state.
 *
 * With DeclarativeValidation (beta, on) the hand-written validation also runs on an object the
 * rules refuse (a failure of it there is not the request's: it was written for objects the rules
 * accept), and the two results are compared as upstream does, by field path and error type: a
 * hand-written cause marked coveredByDeclarative (registry/field-errors.ts) without a declarative
 * cause of the same field and type, and a declarative cause in the covered fields (the kind's
 * `declarativeCoverage` and the fields of marked causes) without a hand-written one, are each one
 * mismatch, reported (apiserver_validation_declarative_validation_mismatch_total and an info log
 * naming the kind, field and type, never a value). The answer stays the hand-written one's as
 * before. With DeclarativeValidationTakeover (beta, off; only with DeclarativeValidation) the
 * declarative causes answer and the marked hand-written causes are dropped (upstream's
 * RemoveCoveredByDeclarative). An exception in the declarative path is reported as a panic and
 * ignored, unless Takeover is on: then the request fails with an InternalError cause, as
 * upstream's ValidateDeclarativelyWithRecovery.
 *
 * Cost: on a valid object, both results are empty and the comparison is a length check.
 */
import type { Cause } from '../api/errors';
import { isCoveredByDeclarative } from '../registry/field-errors';

/** Where mismatches and panics go (the metrics and the log, wired in wiring/store.ts). */
export interface DeclarativeReporter {
  /** One difference between the two validations; detail names kind, field path and error type, never a value. */
  mismatch(detail: string): void;
  /** The declarative path threw; detail names the kind and the exception's message. */
  panic(detail: string): void;
}

/** The two feature gates (config/feature-gates.ts) and the reporter. */
export interface DeclarativeValidationOptions {
  /** DeclarativeValidation: run both and compare. Off: the schema's causes then the hand-written ones, as before. */
  enabled: boolean;
  /** DeclarativeValidationTakeover: the declarative causes answer for the covered rules. Ignored unless enabled. */
  takeover: boolean;
  report: DeclarativeReporter;
}

/** One object's validation, as the store hands it over. */
export interface ValidationInput {
  kind: string;
  /** The schema's causes (validation/validate-schema.ts), structural and rules, in schema order. */
  schema: readonly Cause[];
  /** Object metadata causes (generic, hand-written). */
  meta: readonly Cause[];
  /** The declarative validation's causes: the schema's rules (a function, so that an exception in it is contained). */
  declarative: () => Cause[];
  /** The kind's hand-written validation; absent: none. */
  handwritten?: () => Cause[];
  /** Fields (list indices and map keys written [*]) whose schema rules the hand-written validation also checks. */
  coverage?: readonly string[];
}

const RULE_REASONS: ReadonlySet<string> = new Set(['FieldValueRequired', 'FieldValueNotSupported', 'FieldValueDuplicate']);

/** Whether a schema cause is one of its rules (declarative), not a structural (decoding) error. */
export function isSchemaRule(c: Cause): boolean {
  return RULE_REASONS.has(c.reason);
}

/** The causes of one object (before validateUpdate, which runs when they are none). Throws what the hand-written validation throws where it always ran. */
export function validateObject(input: ValidationInput, o?: DeclarativeValidationOptions): Cause[] {
  const legacy = input.schema.length + input.meta.length > 0 ? [...input.schema, ...input.meta] : undefined;
  if (!o?.enabled || !input.handwritten || input.schema.some((c) => !isSchemaRule(c))) return legacy ?? input.handwritten?.() ?? [];
  const takeover = o.takeover;
  let declarative: Cause[] | undefined;
  try {
    declarative = input.declarative();
  } catch (err) {
    o.report.panic(`declarative validation of ${input.kind} failed: ${(err as Error)?.message ?? String(err)}`);
  }
  let handwritten: Cause[] | undefined;
  if (legacy) {
    // Hand-written validation did not run here before: an exception in it is no answer.
    try {
      handwritten = input.handwritten();
    } catch {
      handwritten = undefined;
    }
  } else {
    handwritten = input.handwritten();
  }
  if (declarative && handwritten) {
    for (const detail of mismatches(input.kind, handwritten, declarative, input.coverage, takeover)) o.report.mismatch(detail);
  }
  if (!takeover) return legacy ?? handwritten ?? [];
  const kept = (handwritten ?? []).filter((c) => !isCoveredByDeclarative(c));
  const fromDeclarative = declarative ?? [{ reason: 'InternalError', message: 'Internal error: panic during declarative validation' }];
  return [...fromDeclarative, ...input.meta, ...kept];
}

const key = (c: Cause): string => `${c.reason}\u0000${c.field ?? ''}`;

/** A field path with list indices and map keys written [*]: spec.ports[2].protocol → spec.ports[*].protocol. */
export function fieldPattern(field: string | undefined): string {
  return (field ?? '').replace(/\[[^\]]*\]/g, '[*]');
}

/**
 * The differences, one line each, as upstream's gatherDeclarativeValidationMismatches: a marked
 * hand-written cause no declarative cause matches (same field and type), and a declarative cause
 * in the covered fields no hand-written cause matches. Exact duplicates among the hand-written
 * causes count once. Lines name the kind, field and type only.
 */
export function mismatches(kind: string, handwritten: readonly Cause[], declarative: readonly Cause[], coverage: readonly string[] = [], takeover = false): string[] {
  if (handwritten.length === 0 && declarative.length === 0) return [];
  const advice = takeover
    ? 'Consider disabling the DeclarativeValidationTakeover feature gate to keep data persisted consistent with prior versions.'
    : 'This difference does not affect the answer since hand-written validation is authoritative.';
  const declared = new Set(declarative.map(key));
  const written = new Set(handwritten.map(key));
  const covered = new Set(coverage);
  const out: string[] = [];
  const seen = new Set<string>();
  for (const c of handwritten) {
    if (!isCoveredByDeclarative(c)) continue;
    covered.add(fieldPattern(c.field));
    const exact = `${key(c)}\u0000${c.message}`;
    if (seen.has(exact)) continue;
    seen.add(exact);
    if (!declared.has(key(c))) out.push(`${kind}: unmatched hand-written error ${c.reason} at ${c.field ?? '<root>'}: declarative validation found none. ${advice}`);
  }
  for (const c of declarative) {
    if (!covered.has(fieldPattern(c.field)) || written.has(key(c))) continue;
    out.push(`${kind}: extra declarative error ${c.reason} at ${c.field ?? '<root>'}: hand-written validation found none. ${advice}`);
  }
  return out;
}
