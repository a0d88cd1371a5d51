/**
 * The fieldValidation query parameter (spec 4.4) and what it does with the unknown and duplicate
 * fields found while decoding a body: Ignore drops them silently, Warn (the default since 1.25)
 * drops them and returns one Warning header text per field, Strict rejects the request with 400
 * listing all of them (spec 6.2, 7). Texts are upstream's strict-decoding wording.
 */
import { errors } from '../api/errors';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

const allowed: readonly FieldValidation[] = ['Ignore', 'Warn', 'Strict'];

/**
 * Reads the fieldValidation query value: absent or empty means Warn; anything else but the three
 * names (case-sensitive) is 400 BadRequest naming the allowed values. Upstream answers a bad
 * value with 422 on CreateOptions/UpdateOptions/PatchOptions using the same NotSupported text.
 */
export function parseFieldValidation(q: string | null): FieldValidation {
  if (q === null || q === '') return 'Warn';
  if ((allowed as readonly string[]).includes(q)) return q as FieldValidation;
  throw errors.badRequest(
    `fieldValidation: Unsupported value: ${JSON.stringify(q)}: supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
  );
}

/** Unknown and duplicate field paths as findUnknownFields and the body parsers report them (`.spec.foo`). */
export interface FieldProblems {
  unknown: readonly string[];
  duplicates: readonly string[];
}

/**
 * Applies mode to the problems found: returns the Warning texts for Warn (`unknown field
 * "spec.foo"`, `duplicate field "metadata.name"`), nothing for Ignore, and for Strict throws one
 * 400 BadRequest (`strict decoding error: unknown field "spec.foo", duplicate field "x"`) when
 * there is anything to report.
 */
export function checkFields(problems: FieldProblems, mode: FieldValidation): string[] {
  if (mode === 'Ignore') return [];
  const texts = [
    ...problems.unknown.map((p) => `unknown field ${JSON.stringify(displayPath(p))}`),
    ...problems.duplicates.map((p) => `duplicate field ${JSON.stringify(displayPath(p))}`),
  ];
  if (mode === 'Strict' && texts.length > 0) throw errors.badRequest(`strict decoding error: ${texts.join(', ')}`);
  return mode === 'Warn' ? texts : [];
}

/** Upstream's messages print the decoder path without its leading dot. */
function displayPath(p: string): string {
  return p.startsWith('.') ? p.slice(1) : p;
}
