/**
 * RFC 6902 JSON Patch (application/json-patch+json) over JSON Pointers (RFC 6901).
 *
 * Status codes follow upstream kube-apiserver, which applies these patches with
 * evanphx/json-patch: a body that does not decode as a patch is 400 BadRequest, a patch that
 * decodes but cannot be applied to the object (missing path, index out of range, failed test)
 * is 422 Invalid. Upstream only notices malformed operations (unknown op, missing path or value)
 * while applying and so answers 422 for them too; we validate every operation before applying
 * any, and answer 400 because the document itself is malformed. Upstream's 422 message is a
 * fixed "the server rejected our request due to an error in our request" that drops the reason;
 * we keep evanphx's reason text (e.g. "testing value /a failed: test failed") as the message and
 * put the failing pointer in details.causes, which is what clients actually need.
 *
 * Indices are the RFC's: digits without leading zeros, or "-" (one past the end) for add.
 * evanphx's negative-index extension is not supported, and a test of a missing path fails (evanphx
 * lets a missing path pass a test against null).
 *
 * Bounds (issue 16: an add and 21 copies of a subtree into itself doubled a 2 KB patch into a
 * GiB-sized object). As upstream, the values copied by one patch may add up to at most
 * maxCopyBytes (evanphx's AccumulatedCopySizeLimit, which kube-apiserver sets to its 3 MiB body
 * limit), 422 past it; each copy's source is measured, with the measure stopping at what is left
 * of the limit, before it is cloned, so a refused copy is never paid for. add and replace insert
 * values of the patch itself, so while a patch applies the object stays below
 * (object + patch + maxCopyBytes). Unlike upstream, the work of shifting array elements (an add
 * or remove inside a long array) and of comparing values (test) is also bounded (maxWork, 422),
 * since 10,000 inserts at the head of a million-element array cost seconds. The size and depth
 * of the result are checked by the caller (patch-by-format.ts), as for the other patch types.
 */
import { ApiError, errors } from '../api/errors';
import { bodyLimitBytes, measureJson } from './json-bounds';
import { deepClone, deepEqual, goTypeName, hasOwn, isJsonObject, setOwn, type JsonObject, type WorkMeter } from './json-value';

/** Upstream's cap on operations in one JSON patch (maxJSONPatchOperations); more is 413. */
export const maxJsonPatchOperations = 10000;

type OpName = 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';

interface Operation {
  op: OpName;
  path: string;
  tokens: string[];
  from?: string;
  fromTokens?: string[];
  value?: unknown;
}

const opNames: readonly string[] = ['add', 'remove', 'replace', 'move', 'copy', 'test'];

/** What one JSON patch may cost. */
export interface JsonPatchBounds {
  /** Upstream's AccumulatedCopySizeLimit: the sizes (json-bounds.ts measureJson) of all values one patch copies, summed. */
  maxCopyBytes: number;
  /** Array elements shifted by inserts and removals plus elements and keys compared by tests, summed over the patch. */
  maxWork: number;
}

/** The server's bounds: upstream's copy limit; work a few times the body limit (milliseconds of shifting). */
export const defaultJsonPatchBounds: JsonPatchBounds = { maxCopyBytes: bodyLimitBytes, maxWork: 4 * bodyLimitBytes };

/**
 * Applies an RFC 6902 patch to doc and returns the result; doc and patch are never mutated.
 * Throws ApiError BadRequest for a malformed patch, Invalid when an operation does not apply or a
 * bound is passed, RequestEntityTooLarge over maxJsonPatchOperations. All operations apply or
 * none do.
 */
export function applyJsonPatch(doc: unknown, patch: unknown, bounds: JsonPatchBounds = defaultJsonPatchBounds): unknown {
  const ops = decodePatch(patch);
  const cost = new PatchCost(bounds);
  let root = deepClone(doc);
  for (const op of ops) root = applyOperation(root, op, cost);
  return root;
}

/** The cost of one patch so far, refusing it (422) once a bound is passed. */
class PatchCost implements WorkMeter {
  private copied = 0;
  private work = 0;

  constructor(private readonly bounds: JsonPatchBounds) {}

  /** Measures a value about to be copied to path and counts it; throws before it is cloned if the copies pass the limit. */
  copy(value: unknown, path: string): void {
    const limit = this.bounds.maxCopyBytes;
    this.copied += measureJson(value, limit - this.copied).size;
    if (this.copied > limit) {
      // evanphx's AccumulatedCopySizeError text; the figure is a lower bound, as measuring stopped at the limit.
      throw notApplicable(`Unable to complete the copy, the accumulated size increase of copy is ${this.copied}, exceeding the limit ${limit}`, path);
    }
  }

  charge(units: number): void {
    this.work += units;
    if (this.work > this.bounds.maxWork) {
      throw new ApiError(
        'Invalid',
        `the JSON patch is too costly to apply: its operations shift or compare more than ${this.bounds.maxWork} array elements and object keys`,
      );
    }
  }
}

/** Parses and checks the whole patch document up front so that no operation runs on a bad patch. */
function decodePatch(patch: unknown): Operation[] {
  if (!Array.isArray(patch)) {
    throw errors.badRequest(`json: cannot unmarshal ${goTypeName(patch)} into Go value of type jsonpatch.Patch`);
  }
  if (patch.length > maxJsonPatchOperations) {
    throw new ApiError(
      'RequestEntityTooLarge',
      `The allowed maximum operations in a JSON patch is ${maxJsonPatchOperations}, got ${patch.length}`,
    );
  }
  return patch.map((raw, i) => decodeOperation(raw, i));
}

function decodeOperation(raw: unknown, i: number): Operation {
  const bad = (why: string) => errors.badRequest(`invalid JSON patch operation at index ${i}: ${why}`);
  if (!isJsonObject(raw)) {
    throw errors.badRequest(`json: cannot unmarshal ${goTypeName(raw)} into Go value of type jsonpatch.Operation`);
  }
  const name = raw.op;
  if (typeof name !== 'string') throw bad('missing or non-string "op"');
  if (!opNames.includes(name)) throw bad(`Unexpected kind: ${name}`);
  const op = name as OpName;
  if (typeof raw.path !== 'string') throw bad(`${op} operation failed to decode path`);
  const tokens = parsePointer(raw.path);
  if (!tokens) throw bad(`invalid JSON pointer ${JSON.stringify(raw.path)}`);
  const out: Operation = { op, path: raw.path, tokens };
  if (op === 'move' || op === 'copy') {
    if (typeof raw.from !== 'string') throw bad(`${op} operation failed to decode from`);
    const fromTokens = parsePointer(raw.from);
    if (!fromTokens) throw bad(`invalid JSON pointer ${JSON.stringify(raw.from)}`);
    out.from = raw.from;
    out.fromTokens = fromTokens;
  }
  if (op === 'add' || op === 'replace' || op === 'test') {
    // RFC 6902 requires "value"; an explicit null is a value.
    if (!hasOwn(raw, 'value')) throw bad(`${op} operation is missing "value"`);
    out.value = raw.value;
  }
  return out;
}

/** RFC 6901: "" is the whole document, otherwise "/"-separated tokens with ~1 = "/" and ~0 = "~". Undefined when malformed. */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens = pointer.slice(1).split('/');
  for (const t of tokens) if (/~(?![01])/.test(t)) return undefined;
  return tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Applies one operation to root (which this module owns) and returns the new root. */
function applyOperation(root: unknown, op: Operation, cost: PatchCost): unknown {
  switch (op.op) {
    case 'add':
      return add(root, op.tokens, deepClone(op.value), op.path, 'add', cost);
    case 'remove':
      remove(root, op.tokens, op.path, 'remove', cost);
      return root;
    case 'replace': {
      if (op.tokens.length === 0) return deepClone(op.value);
      const { parent, token } = locate(root, op.tokens, op.path, 'replace');
      if (Array.isArray(parent)) parent[existingIndex(parent, token, op.path, 'replace')] = deepClone(op.value);
      else {
        if (!hasOwn(parent, token)) throw notApplicable(`replace operation does not apply: doc is missing key: ${op.path}: missing value`, op.path);
        setOwn(parent, token, deepClone(op.value));
      }
      return root;
    }
    case 'move': {
      const from = op.fromTokens!;
      const value = get(root, from, op.from!, 'move');
      if (op.from === op.path) return root;
      if (op.path.startsWith(op.from! + '/')) {
        throw notApplicable(`move operation does not apply: from ${op.from} is a prefix of path ${op.path}`, op.path);
      }
      // from is not "" here: "" is a prefix of every other path.
      remove(root, from, op.from!, 'move', cost);
      return add(root, op.tokens, value, op.path, 'move', cost);
    }
    case 'copy': {
      const source = get(root, op.fromTokens!, op.from!, 'copy');
      cost.copy(source, op.path);
      return add(root, op.tokens, deepClone(source), op.path, 'copy', cost);
    }
    case 'test': {
      const actual = get(root, op.tokens, op.path, 'test');
      if (!deepEqual(actual, op.value, cost)) throw notApplicable(`testing value ${op.path} failed: test failed`, op.path);
      return root;
    }
  }
}

type Container = unknown[] | JsonObject;

/** The container holding the last token of tokens (which must be non-empty), or 422 when absent. */
function locate(root: unknown, tokens: string[], path: string, opName: string): { parent: Container; token: string } {
  let cur: unknown = root;
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i];
    if (Array.isArray(cur)) {
      const idx = parseIndex(t);
      if (idx === undefined || idx >= cur.length) throw missingPath(opName, path);
      cur = cur[idx];
    } else if (isJsonObject(cur) && hasOwn(cur, t)) {
      cur = cur[t];
    } else {
      throw missingPath(opName, path);
    }
  }
  if (!Array.isArray(cur) && !isJsonObject(cur)) throw missingPath(opName, path);
  return { parent: cur, token: tokens[tokens.length - 1] };
}

function get(root: unknown, tokens: string[], path: string, opName: string): unknown {
  if (tokens.length === 0) return root;
  const { parent, token } = locate(root, tokens, path, opName);
  if (Array.isArray(parent)) return parent[existingIndex(parent, token, path, opName)];
  if (!hasOwn(parent, token)) throw missingPath(opName, path);
  return parent[token];
}

function add(root: unknown, tokens: string[], value: unknown, path: string, opName: string, cost: PatchCost): unknown {
  if (tokens.length === 0) return value;
  const { parent, token } = locate(root, tokens, path, opName);
  if (Array.isArray(parent)) {
    if (token === '-') {
      parent.push(value);
    } else {
      const idx = parseIndex(token);
      // add may insert at length (append); anything beyond is out of range.
      if (idx === undefined || idx > parent.length) throw invalidIndex(token, path);
      cost.charge(parent.length - idx);
      parent.splice(idx, 0, value);
    }
  } else {
    setOwn(parent, token, value);
  }
  return root;
}

function remove(root: unknown, tokens: string[], path: string, opName: string, cost: PatchCost): void {
  if (tokens.length === 0) throw missingPath(opName, path);
  const { parent, token } = locate(root, tokens, path, opName);
  if (Array.isArray(parent)) {
    const idx = existingIndex(parent, token, path, opName);
    cost.charge(parent.length - idx - 1);
    parent.splice(idx, 1);
  } else {
    if (!hasOwn(parent, token)) throw notApplicable(`Unable to remove nonexistent key: ${token}: missing value`, path);
    delete parent[token];
  }
}

function existingIndex(arr: unknown[], token: string, path: string, opName: string): number {
  const idx = parseIndex(token);
  if (idx === undefined) {
    if (token === '-') throw invalidIndex(token, path);
    throw missingPath(opName, path);
  }
  if (idx >= arr.length) throw invalidIndex(token, path);
  return idx;
}

/** RFC 6901 array index: "0" or digits without a leading zero. */
function parseIndex(token: string): number | undefined {
  return /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : undefined;
}

function notApplicable(message: string, path: string): ApiError {
  return new ApiError('Invalid', message, { causes: [{ reason: 'FieldValueInvalid', message, field: path }] });
}

function missingPath(opName: string, path: string): ApiError {
  return notApplicable(`${opName} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`, path);
}

function invalidIndex(token: string, path: string): ApiError {
  return notApplicable(`Unable to access invalid index: ${token}: invalid index referenced`, path);
}
