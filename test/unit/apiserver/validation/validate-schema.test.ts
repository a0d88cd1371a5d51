import test from 'ava';
import { errors, type Cause } from '../../../../apiserver/api/errors';
import type { ObjectSchema, Schema } from '../../../../apiserver/api/schema';
import { isValidDateTime, isValidQuantity, validateAgainstSchema } from '../../../../apiserver/validation/validate-schema';

const str: Schema = { type: 'string' };
const schema: ObjectSchema = {
  type: 'object',
  properties: {
    metadata: {
      type: 'object',
      properties: { name: str, labels: { type: 'map', values: str }, creationTimestamp: { type: 'date-time' } },
    },
    spec: {
      type: 'object',
      required: ['containers'],
      properties: {
        replicas: { type: 'integer' },
        ratio: { type: 'number' },
        paused: { type: 'boolean' },
        restartPolicy: { type: 'string', enum: ['Always', 'OnFailure', 'Never'] },
        maxSurge: { type: 'int-or-string' },
        extra: { type: 'any' },
        containers: {
          type: 'array',
          listType: 'map',
          mapKeys: ['name'],
          items: {
            type: 'object',
            required: ['name', 'image'],
            properties: {
              name: str,
              image: str,
              resources: { type: 'object', properties: { limits: { type: 'map', values: { type: 'quantity' } } } },
              ports: {
                type: 'array',
                listType: 'map',
                mapKeys: ['containerPort', 'protocol'],
                items: { type: 'object', properties: { containerPort: { type: 'integer' }, protocol: str } },
              },
            },
          },
        },
      },
    },
  },
};

function valid(): Record<string, any> {
  return {
    metadata: { name: 'x', labels: { a: 'b' }, creationTimestamp: '2024-02-29T12:00:00Z' },
    spec: {
      replicas: 3,
      ratio: 0.5,
      paused: false,
      restartPolicy: 'Always',
      maxSurge: '25%',
      extra: { anything: [1, 'two', { three: null }] },
      containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '100m', memory: '1Gi', gpu: 2 } } }],
    },
  };
}

function only(causes: Cause[]): Cause {
  if (causes.length !== 1) throw new Error(`expected one cause, got ${JSON.stringify(causes)}`);
  return causes[0];
}

test('a valid object has no causes', (t) => {
  t.deepEqual(validateAgainstSchema(valid(), schema), []);
});

test('type mismatches are FieldValueTypeInvalid with the upstream wording', (t) => {
  const o = valid();
  o.spec.replicas = 'three';
  t.deepEqual(only(validateAgainstSchema(o, schema)), {
    reason: 'FieldValueTypeInvalid',
    message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    field: 'spec.replicas',
  });
  o.spec.replicas = 1.5;
  t.is(only(validateAgainstSchema(o, schema)).message, 'Invalid value: "number": spec.replicas in body must be of type integer: "number"');
  // The caller turns causes into one 422 with the field prefixed.
  t.is(
    errors.invalid('Deployment', 'x', validateAgainstSchema(o, schema)).message,
    'Deployment "x" is invalid: spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"',
  );
});

test('every scalar type is checked', (t) => {
  const cases: Array<[string, unknown, string]> = [
    ['ratio', 'x', 'number'],
    ['paused', 'true', 'boolean'],
    ['maxSurge', 1.5, 'integer or string'],
    ['maxSurge', true, 'integer or string'],
    ['restartPolicy', 1, 'string'],
  ];
  for (const [field, value, want] of cases) {
    const o = valid();
    o.spec[field] = value;
    const c = only(validateAgainstSchema(o, schema));
    t.is(c.field, `spec.${field}`);
    t.is(c.reason, 'FieldValueTypeInvalid');
    t.true(c.message.includes(`must be of type ${want}`), c.message);
  }
  const o = valid();
  o.spec.maxSurge = 2;
  o.spec.ratio = 3;
  t.deepEqual(validateAgainstSchema(o, schema), []);
});

test('objects, maps and arrays must have their JSON type', (t) => {
  const o = valid();
  o.metadata.labels = ['a'];
  o.spec.containers = { name: 'c' };
  const causes = validateAgainstSchema(o, schema);
  t.deepEqual(
    causes.map((c) => [c.field, c.message]),
    [
      ['metadata.labels', 'Invalid value: "array": metadata.labels in body must be of type object: "array"'],
      ['spec.containers', 'Invalid value: "object": spec.containers in body must be of type array: "object"'],
    ],
  );
  const root = only(validateAgainstSchema('nope', schema));
  t.is(root.field, undefined);
  t.is(root.message, 'Invalid value: "string": body must be of type object: "string"');
});

test('missing required fields are FieldValueRequired with indexed paths', (t) => {
  const o = valid();
  o.spec.containers.push({ image: 'x' }, { name: 'd', image: null });
  t.deepEqual(validateAgainstSchema(o, schema), [
    { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[1].name' },
    { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[2].image' },
  ]);
  delete o.spec.containers;
  t.deepEqual(only(validateAgainstSchema(o, schema)).field, 'spec.containers');
});

test('null is an unset field: it passes type checks', (t) => {
  const o = valid();
  o.spec.replicas = null;
  o.metadata.labels = null;
  t.deepEqual(validateAgainstSchema(o, schema), []);
});

test('enums report FieldValueNotSupported listing the supported values', (t) => {
  const o = valid();
  o.spec.restartPolicy = 'Sometimes';
  t.deepEqual(only(validateAgainstSchema(o, schema)), {
    reason: 'FieldValueNotSupported',
    message: 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    field: 'spec.restartPolicy',
  });
});

test('map values are validated with [key] paths', (t) => {
  const o = valid();
  o.metadata.labels = { good: 'x', 'svc.io/bad': 5 };
  t.is(only(validateAgainstSchema(o, schema)).field, 'metadata.labels[svc.io/bad]');
});

test('quantities: valid strings and numbers pass, bad syntax is FieldValueInvalid', (t) => {
  const o = valid();
  o.spec.containers[0].resources.limits = { a: '1.5Gi', b: '1e3', c: '0.5', d: 2, e: '-1', f: '1E', g: '500u', h: '.5', i: 1.25 };
  t.deepEqual(validateAgainstSchema(o, schema), []);
  o.spec.containers[0].resources.limits = { cpu: '1 core' };
  t.deepEqual(only(validateAgainstSchema(o, schema)), {
    reason: 'FieldValueInvalid',
    message: `Invalid value: "1 core": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    field: 'spec.containers[0].resources.limits[cpu]',
  });
  o.spec.containers[0].resources.limits = { cpu: true };
  t.is(only(validateAgainstSchema(o, schema)).reason, 'FieldValueTypeInvalid');
});

test('isValidQuantity follows the upstream syntax', (t) => {
  for (const q of ['100m', '1Gi', '2', '1e3', '0.5', '1Ki', '5Ei', '3E', '1.', '+1', '-2k', '4n', '1e-3', '1E+6', '0']) {
    t.true(isValidQuantity(q), q);
  }
  for (const q of ['', 'abc', '1 Gi', '1gi', '1GB', '1.2.3', '1e', 'Gi', '1Mi2', '1KiB', '--1', '1e3.5', '.']) {
    t.false(isValidQuantity(q), q);
  }
});

test('date-time must be RFC 3339', (t) => {
  const o = valid();
  o.metadata.creationTimestamp = 'yesterday';
  t.deepEqual(only(validateAgainstSchema(o, schema)), {
    reason: 'FieldValueInvalid',
    message: 'Invalid value: "yesterday": metadata.creationTimestamp in body must be of type date-time: "yesterday"',
    field: 'metadata.creationTimestamp',
  });
  for (const d of ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.123456789Z', '2024-01-02T03:04:05+05:30', '2000-02-29T00:00:00-08:00']) {
    t.true(isValidDateTime(d), d);
  }
  for (const d of ['2024-01-02', '2024-01-02 03:04:05Z', '2024-13-02T03:04:05Z', '2023-02-29T00:00:00Z', '2024-04-31T00:00:00Z', '2024-01-02T24:00:00Z', '2024-01-02T03:04:60Z', '2024-01-02T03:04:05', '2024-01-02t03:04:05z', '2024-01-02T03:04:05+5:30']) {
    t.false(isValidDateTime(d), d);
  }
});

test('duplicate keys in listType map lists are FieldValueDuplicate', (t) => {
  const o = valid();
  o.spec.containers.push({ name: 'c', image: 'again' });
  t.deepEqual(only(validateAgainstSchema(o, schema)), {
    reason: 'FieldValueDuplicate',
    message: 'Duplicate value: "c"',
    field: 'spec.containers[1].name',
  });
  const p = valid();
  p.spec.containers[0].ports = [
    { containerPort: 80, protocol: 'TCP' },
    { containerPort: 80, protocol: 'UDP' },
    { containerPort: 80, protocol: 'TCP' },
  ];
  t.deepEqual(only(validateAgainstSchema(p, schema)), {
    reason: 'FieldValueDuplicate',
    message: 'Duplicate value: {"containerPort":80,"protocol":"TCP"}',
    field: 'spec.containers[0].ports[2]',
  });
});

test('several problems are all reported', (t) => {
  const o = valid();
  o.spec.replicas = 'x';
  o.spec.paused = 1;
  o.spec.containers[0].image = 7;
  t.deepEqual(
    validateAgainstSchema(o, schema).map((c) => c.field),
    ['spec.replicas', 'spec.paused', 'spec.containers[0].image'],
  );
});

test('integers must fit their Go type: int32 to ±2^31, int64 to what a double holds exactly', (t) => {
  const s: ObjectSchema = {
    type: 'object',
    properties: {
      port: { type: 'integer', format: 'int32' },
      size: { type: 'integer', format: 'int64' },
      plain: { type: 'integer' },
      target: { type: 'int-or-string' },
    },
  };
  const ok = [
    { port: 2147483647, size: 9007199254740991, plain: -9007199254740991, target: -2147483648 },
    { port: -2147483648, size: -9007199254740991, plain: 0, target: 'http' },
  ];
  for (const v of ok) t.deepEqual(validateAgainstSchema(v, s), [], JSON.stringify(v));
  const refused: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ port: 2147483648 }, 'port', /^Invalid value: 2147483648: port in body must be an int32, between -2147483648 and 2147483647$/],
    [{ port: -2147483649 }, 'port', /must be an int32/],
    // JSON.parse turns 9007199254740993 into 9007199254740992: refused, not stored rounded.
    [{ size: JSON.parse('9007199254740993') as number }, 'size', /^Invalid value: 9007199254740992: size in body must be between -9007199254740991 and 9007199254740991: a larger int64 cannot be stored exactly$/],
    [{ size: 1e20 }, 'size', /^Invalid value: 100000000000000000000: size in body must be between/],
    [{ size: -1e300 }, 'size', /^Invalid value: -1e\+300: /],
    [{ plain: 2 ** 63 }, 'plain', /cannot be stored exactly/],
    [{ size: 1.5 }, 'size', /must be of type integer/],
    [{ target: 2 ** 31 }, 'target', /must be an int32/],
  ];
  for (const [v, field, message] of refused) {
    const causes = validateAgainstSchema(v, s);
    t.is(causes.length, 1, JSON.stringify(v));
    t.is(causes[0].field, field);
    t.regex(causes[0].message, message, JSON.stringify(v));
  }
});
