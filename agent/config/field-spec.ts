/**
 * A small typed schema for versioned configuration files. One description per field drives
 * strict decoding (unknown fields, types, enums, ranges), defaulting and the drop-in merge
 * rules of spec Appendix D, so the three can never disagree.
 */
import { parseDuration, formatDuration } from '../../apiserver/api/duration';

/** A problem found while decoding, with the field path relative to the document root. */
export interface FieldProblem {
  field: string;
  message: string;
}

export interface StringSpec<T extends string = string> {
  kind: 'string';
  default: T;
  enum?: readonly T[];
  /** The field must be present (used for items of lists of structs, which have no base to merge onto). */
  required?: boolean;
  /** Returns why the value is invalid, or undefined. */
  check?(value: string): string | undefined;
}
export interface BoolSpec {
  kind: 'bool';
  default: boolean;
}
export interface IntSpec {
  kind: 'int';
  default: number;
  min?: number;
  max?: number;
  /** Returns why the value is invalid, or undefined. Runs after the range check. */
  check?(value: number): string | undefined;
}
/** A Go duration string in the file; milliseconds in memory. */
export interface DurationSpec {
  kind: 'duration';
  default: number;
  /** Smallest allowed value in ms (inclusive); 0 when unset. */
  min?: number;
}
export interface ListSpec<E = unknown> {
  kind: 'list';
  of: SpecFor<E>;
  default: readonly E[];
}
export interface MapSpec<V = unknown> {
  kind: 'map';
  of: SpecFor<V>;
  default: Readonly<Record<string, V>>;
  /** Returns why an entry is invalid (bad key, or a key/value combination), or undefined. */
  checkEntry?(key: string, value: V): string | undefined;
}
export interface StructSpec<T = Record<string, unknown>> {
  kind: 'struct';
  fields: { [K in keyof T]-?: SpecFor<T[K]> };
}

/** The spec type that matches a TypeScript field type; maps are records with a string index. */
export type SpecFor<T> = [T] extends [string]
  ? StringSpec<T>
  : [T] extends [boolean]
    ? BoolSpec
    : [T] extends [number]
      ? IntSpec | DurationSpec
      : [T] extends [readonly (infer E)[]]
        ? ListSpec<E>
        : [T] extends [object]
          ? string extends keyof T
            ? MapSpec<T[string & keyof T]>
            : StructSpec<T>
          : never;

/** Untyped view used by the generic algorithms below. */
type AnySpec =
  | StringSpec
  | BoolSpec
  | IntSpec
  | DurationSpec
  | { kind: 'list'; of: AnySpec; default: readonly unknown[] }
  | { kind: 'map'; of: AnySpec; default: Readonly<Record<string, unknown>>; checkEntry?(key: string, value: unknown): string | undefined }
  | { kind: 'struct'; fields: Record<string, AnySpec> };

/** Marker for an explicit null in a file: "unset this field" (reset to default, or drop a map key). */
export const UNSET = null;

export function joinPath(base: string, name: string): string {
  return base === '' ? name : `${base}.${name}`;
}
function indexPath(base: string, key: string | number): string {
  return `${base}[${key}]`;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'string') return `string ${JSON.stringify(v)}`;
  // What is left is a scalar (or a function): String() spells each.
  const scalar = v as number | boolean | bigint | symbol | undefined | (() => unknown);
  return `${typeof scalar === 'number' ? 'number' : typeof scalar} ${String(scalar)}`;
}

/**
 * Strictly decodes raw (YAML/JSON) data against a spec. Returns the partial value (only the fields
 * present; null kept as "unset") and appends every problem found; never throws.
 */
export function decode(raw: unknown, spec: unknown, path: string, problems: FieldProblem[]): unknown {
  const s = spec as AnySpec;
  if (raw === null) return UNSET;
  const bad = (message: string): undefined => {
    problems.push({ field: path, message });
    return undefined;
  };
  switch (s.kind) {
    case 'string': {
      if (typeof raw !== 'string') return bad(`expected a string, got ${describe(raw)}`);
      if (s.enum && !s.enum.includes(raw)) {
        return bad(`unsupported value ${JSON.stringify(raw)}: supported values: ${s.enum.filter((e) => e !== '').map((e) => JSON.stringify(e)).join(', ')}`);
      }
      const why = s.check?.(raw);
      return why ? bad(why) : raw;
    }
    case 'bool':
      return typeof raw === 'boolean' ? raw : bad(`expected a boolean (true or false), got ${describe(raw)}`);
    case 'int': {
      if (typeof raw !== 'number' || !Number.isInteger(raw)) return bad(`expected an integer, got ${describe(raw)}`);
      if ((s.min !== undefined && raw < s.min) || (s.max !== undefined && raw > s.max)) {
        return bad(rangeMessage(String(raw), s.min, s.max));
      }
      const why = s.check?.(raw);
      return why ? bad(why) : raw;
    }
    case 'duration': {
      if (typeof raw !== 'string') return bad(`expected a duration string such as "10s" or "5m0s", got ${describe(raw)}`);
      let ms: number;
      try {
        ms = parseDuration(raw);
      } catch (e) {
        return bad((e as Error).message);
      }
      if (!Number.isInteger(ms)) return bad(`invalid duration ${JSON.stringify(raw)}: must be a whole number of milliseconds`);
      const min = s.min ?? 0;
      if (ms < min) return bad(`invalid value ${JSON.stringify(raw)}: must be at least ${formatDuration(min)}`);
      return ms;
    }
    case 'list': {
      if (!Array.isArray(raw)) return bad(`expected a list, got ${describe(raw)}`);
      return raw.map((item, i) => {
        if (item === null) {
          problems.push({ field: indexPath(path, i), message: 'null is not allowed in a list' });
          return undefined;
        }
        return decode(item, s.of, indexPath(path, i), problems);
      });
    }
    case 'map': {
      if (!isPlainObject(raw)) return bad(`expected a map, got ${describe(raw)}`);
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(raw)) {
        const p = indexPath(path, key);
        const before = problems.length;
        const decoded = decode(value, s.of, p, problems);
        if (problems.length === before && decoded !== UNSET) {
          const why = s.checkEntry?.(key, decoded);
          if (why) problems.push({ field: p, message: why });
        }
        out[key] = decoded;
      }
      return out;
    }
    case 'struct': {
      if (!isPlainObject(raw)) return bad(`expected an object, got ${describe(raw)}`);
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(raw)) {
        const fieldSpec = Object.prototype.hasOwnProperty.call(s.fields, key) ? s.fields[key] : undefined;
        if (!fieldSpec) {
          problems.push({ field: joinPath(path, key), message: 'unknown field' });
          continue;
        }
        out[key] = decode(value, fieldSpec, joinPath(path, key), problems);
      }
      for (const [key, f] of Object.entries(s.fields)) {
        if (f.kind === 'string' && f.required && (raw[key] === undefined || raw[key] === null)) {
          problems.push({ field: joinPath(path, key), message: 'required value' });
        }
      }
      return out;
    }
  }
}

function rangeMessage(value: string, min?: number, max?: number): string {
  if (min !== undefined && max !== undefined) return `invalid value ${value}: must be between ${min} and ${max}, inclusive`;
  if (min !== undefined) return `invalid value ${value}: must be greater than or equal to ${min}`;
  return `invalid value ${value}: must be less than or equal to ${max}`;
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

/** A decoded value back in its file form (durations as Go duration strings); decode(encode(v)) gives v. */
export function encode(value: unknown, spec: unknown): unknown {
  const s = spec as AnySpec;
  switch (s.kind) {
    case 'duration':
      return formatDuration(value as number);
    case 'struct': {
      const out: Record<string, unknown> = {};
      for (const [k, f] of Object.entries(s.fields)) out[k] = encode((value as Record<string, unknown>)[k], f);
      return out;
    }
    case 'list':
      return (value as unknown[]).map((v) => encode(v, s.of));
    case 'map':
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, encode(v, s.of)]));
    default:
      return value;
  }
}

/** The fully defaulted value of a spec. */
export function defaultOf(spec: unknown): unknown {
  const s = spec as AnySpec;
  switch (s.kind) {
    case 'struct': {
      const out: Record<string, unknown> = {};
      for (const [k, f] of Object.entries(s.fields)) out[k] = defaultOf(f);
      return out;
    }
    case 'list':
    case 'map':
      return clone(s.default);
    default:
      return s.default;
  }
}

/**
 * Applies a decoded partial onto a fully defaulted base following spec Appendix D: scalars
 * replace, structs merge field by field, lists replace whole, maps merge key by key (a map of
 * string to list therefore replaces one key's whole list). An explicit null resets a field to its
 * default or deletes a map key. `onSet` receives the path of every value the overlay sets.
 */
export function mergeOnto(base: unknown, overlay: unknown, spec: unknown, path: string, onSet: (path: string) => void): unknown {
  const s = spec as AnySpec;
  if (overlay === undefined) return base;
  if (overlay === UNSET) {
    onSet(path);
    return defaultOf(s);
  }
  switch (s.kind) {
    case 'struct': {
      const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
      for (const [k, v] of Object.entries(overlay as Record<string, unknown>)) {
        const f = s.fields[k];
        if (f) out[k] = mergeOnto(out[k], v, f, joinPath(path, k), onSet);
      }
      return out;
    }
    case 'map': {
      const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
      for (const [k, v] of Object.entries(overlay as Record<string, unknown>)) {
        const p = indexPath(path, k);
        onSet(p);
        if (v === UNSET) {
          delete out[k];
          continue;
        }
        // Struct values merge field by field; scalars and lists replace the key's value whole.
        out[k] = s.of.kind === 'struct' ? mergeOnto(out[k] ?? defaultOf(s.of), v, s.of, p, () => {}) : withDefaults(v, s.of);
      }
      return out;
    }
    case 'list':
      onSet(path);
      return (overlay as unknown[]).map((item) => withDefaults(item, s.of));
    default:
      onSet(path);
      return overlay;
  }
}

/**
 * A decoded partial made whole, as upstream defaulting does for the base --config file: unset
 * fields take their defaults, while a map or list the partial sets replaces the default whole.
 */
export function withDefaults(partial: unknown, spec: unknown): unknown {
  const s = spec as AnySpec;
  if (partial === undefined || partial === UNSET) return defaultOf(s);
  switch (s.kind) {
    case 'struct': {
      const p = partial as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [k, f] of Object.entries(s.fields)) out[k] = withDefaults(p[k], f);
      return out;
    }
    case 'list':
      return (partial as unknown[]).map((i) => withDefaults(i, s.of));
    case 'map': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(partial as Record<string, unknown>)) if (v !== UNSET) out[k] = withDefaults(v, s.of);
      return out;
    }
    default:
      return partial;
  }
}

/** Calls `onSet` with the path of every value a decoded partial sets (the leaves mergeOnto would report). */
export function visitSet(partial: unknown, spec: unknown, path: string, onSet: (path: string) => void): void {
  const s = spec as AnySpec;
  if (partial === undefined) return;
  if (partial !== UNSET && s.kind === 'struct') {
    for (const [k, v] of Object.entries(partial as Record<string, unknown>)) {
      const f = s.fields[k];
      if (f) visitSet(v, f, joinPath(path, k), onSet);
    }
    return;
  }
  if (partial !== UNSET && s.kind === 'map') {
    for (const k of Object.keys(partial)) onSet(indexPath(path, k));
    return;
  }
  onSet(path);
}
