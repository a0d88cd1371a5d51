import test from 'ava';
import type { ObjectSchema, Schema } from '../../../../apiserver/api/schema';
import { findUnknownFields, pruneUnknownFields } from '../../../../apiserver/validation/unknown-fields';

const str: Schema = { type: 'string' };
const schema: ObjectSchema = {
  type: 'object',
  properties: {
    metadata: { type: 'object', properties: { name: str, labels: { type: 'map', values: str } } },
    spec: {
      type: 'object',
      properties: {
        containers: { type: 'array', items: { type: 'object', properties: { name: str, image: str } } },
        volumes: { type: 'map', values: { type: 'object', properties: { path: str } } },
        extra: { type: 'any' },
        replicas: { type: 'integer' },
      },
    },
  },
};

function body(): Record<string, any> {
  return {
    metadata: { name: 'x', labels: { anything: 'goes' }, bogus: 1 },
    spec: {
      foo: 'bar',
      containers: [{ name: 'a', image: 'i' }, { name: 'b', bar: { deep: 1 } }],
      volumes: { data: { path: '/d', size: 3 } },
      extra: { whatever: { you: ['like'] } },
      replicas: { notAnInteger: true },
    },
    status: {},
  };
}

test('findUnknownFields reports upstream-style paths in document order', (t) => {
  t.deepEqual(findUnknownFields(body(), schema), [
    '.metadata.bogus',
    '.spec.foo',
    '.spec.containers[1].bar',
    '.spec.volumes.data.size',
    '.status',
  ]);
});

test('findUnknownFields does not modify the object', (t) => {
  const o = body();
  findUnknownFields(o, schema);
  t.deepEqual(o, body());
});

test('type any accepts anything and wrong-typed values are left to validation', (t) => {
  t.deepEqual(findUnknownFields({ spec: { extra: { a: { b: 1 } }, replicas: { x: 1 } } }, schema), []);
  t.deepEqual(findUnknownFields('not an object', schema), []);
});

test('pruneUnknownFields removes them in place and returns their paths', (t) => {
  const o = body();
  const removed = pruneUnknownFields(o, schema);
  t.is(removed.length, 5);
  t.deepEqual(o, {
    metadata: { name: 'x', labels: { anything: 'goes' } },
    spec: {
      containers: [{ name: 'a', image: 'i' }, { name: 'b' }],
      volumes: { data: { path: '/d' } },
      extra: { whatever: { you: ['like'] } },
      replicas: { notAnInteger: true },
    },
  });
  t.deepEqual(findUnknownFields(o, schema), []);
});
