import test from 'ava';
import type { Schema } from '../../../../apiserver/api/schema';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';

/** Every field of every served kind says what it is (OpenAPI descriptions: kubectl explain prints `<empty>` otherwise). */
test('every field of every served kind has a description', (t) => {
  const missing = new Set<string>();
  const seen = new Set<Schema>();
  const walk = (s: Schema | undefined, where: string): void => {
    if (!s || seen.has(s)) return;
    seen.add(s);
    if (s.type === 'object') {
      for (const [k, v] of Object.entries(s.properties)) {
        if (!v.description) missing.add(`${s.proto?.name ?? where}.${k}`);
        walk(v, `${where}.${k}`);
      }
    } else if (s.type === 'map') walk(s.values, where);
    else if (s.type === 'array') walk(s.items, where);
  };
  for (const type of makeBuiltinTypes()) walk(type.schema, type.kind);
  t.deepEqual([...missing].sort(), []);
});
