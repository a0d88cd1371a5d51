import type { ObjectSchema, Schema } from '../api/schema';

/**
 * A schema compiled for the codec: each message's fields in field-number order with a codec per
 * value, and a lookup by number for decoding. Compiled once per schema object and cached; a
 * schema the protobuf form cannot carry (an object without its upstream message, an 'any' that
 * is not FieldsV1/RawExtension, an integer without a width) fails here, naming the field.
 */

export type ScalarKind = 'string' | 'bytes' | 'int32' | 'int64' | 'bool' | 'double' | 'intOrString' | 'quantity' | 'time' | 'microTime' | 'duration';

export type ValueCodec =
  | { k: ScalarKind; keepZero: boolean }
  | { k: 'message'; plan: MessagePlan }
  | { k: 'raw' }
  | { k: 'map'; value: ValueCodec }
  | { k: 'array'; item: ValueCodec; wrapped: boolean };

export interface FieldPlan {
  key: string;
  no: number;
  /** Absent for an inline (embedded) message, whose fields are read from and into the parent object. */
  codec?: ValueCodec;
  inline?: MessagePlan;
}

export interface MessagePlan {
  name: string;
  /** Fields in ascending number order (the order Go writes them). */
  fields: FieldPlan[];
  /** Fields by number. */
  byNo: Map<number, FieldPlan>;
}

const plans = new WeakMap<ObjectSchema, MessagePlan>();

/** The compiled plan of a message schema. */
export function planOf(schema: ObjectSchema): MessagePlan {
  const cached = plans.get(schema);
  if (cached) return cached;
  const proto = schema.proto;
  if (!proto) throw new Error('protobuf: object schema has no upstream message');
  const plan: MessagePlan = { name: proto.name, fields: [], byNo: new Map() };
  // Cached before its fields compile, so a schema that contains itself would terminate.
  plans.set(schema, plan);
  try {
    for (const [key, no] of Object.entries(proto.fields)) {
      plan.fields.push({ key, no, codec: codecOf(schema.properties[key], `${proto.name}.${key}`) });
    }
    for (const { no, schema: inner } of proto.inline ?? []) plan.fields.push({ key: '', no, inline: planOf(inner) });
    plan.fields.sort((a, b) => a.no - b.no);
    for (const f of plan.fields) {
      if (plan.byNo.has(f.no)) throw new Error(`protobuf: ${proto.name} uses field number ${f.no} twice`);
      plan.byNo.set(f.no, f);
    }
  } catch (err) {
    plans.delete(schema);
    throw err;
  }
  return plan;
}

/** Whether objects of this schema have a protobuf form. */
export function hasProtobuf(schema: ObjectSchema): boolean {
  if (!schema.proto) return false;
  try {
    planOf(schema);
    return true;
  } catch {
    return false;
  }
}

function codecOf(s: Schema | undefined, where: string): ValueCodec {
  if (!s) throw new Error(`protobuf: ${where} has a field number but no schema`);
  switch (s.type) {
    case 'object':
      if (!s.proto) throw new Error(`protobuf: ${where} is an object without an upstream message`);
      return { k: 'message', plan: planOf(s) };
    case 'map':
      if (s.values.type === 'map' || (s.values.type === 'array' && !s.values.wrapper)) throw new Error(`protobuf: ${where} maps to a list or map`);
      return { k: 'map', value: codecOf(s.values, `${where}[value]`) };
    case 'array':
      if (s.items.type === 'array' || s.items.type === 'map') throw new Error(`protobuf: ${where} is a list of lists or maps`);
      return { k: 'array', item: codecOf(s.items, `${where}[item]`), wrapped: s.wrapper !== undefined };
    case 'any':
      if (!s.raw) throw new Error(`protobuf: ${where} is any JSON without a FieldsV1/RawExtension message`);
      return { k: 'raw' };
    default:
      return { k: scalarKind(s.type, s.format, where), keepZero: s.keepZero === true };
  }
}

function scalarKind(type: string, format: string | undefined, where: string): ScalarKind {
  switch (type) {
    case 'string':
      return format === 'byte' ? 'bytes' : format === 'duration' ? 'duration' : 'string';
    case 'integer':
      if (format === 'int32' || format === 'int64') return format;
      throw new Error(`protobuf: ${where} is an integer without int32/int64 width`);
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'int-or-string':
      return 'intOrString';
    case 'quantity':
      return 'quantity';
    default:
      return format === 'micro-time' ? 'microTime' : 'time';
  }
}
