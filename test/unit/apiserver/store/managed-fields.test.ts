import test from 'ava';
import type { Schema } from '../../../../apiserver/api/schema';
import type { KObject } from '../../../../apiserver/api/types';
import { managerFromUserAgent, updateManagedFields } from '../../../../apiserver/store/managed-fields';

const schema: Schema = {
  type: 'object',
  properties: {
    metadata: { type: 'object', properties: { labels: { type: 'map', values: { type: 'string' } } } },
    spec: {
      type: 'object',
      properties: {
        containers: { type: 'array', listType: 'map', mapKeys: ['name'], items: { type: 'object', properties: { name: { type: 'string' }, image: { type: 'string' } } } },
      },
    },
  },
};
const w = (manager: string) => ({ manager, operation: 'Update' as const, apiVersion: 'v1', time: '2026-01-01T00:00:00Z', subresource: '', schema });

test('create gives the writer every field, with keyed list entries', (t) => {
  const obj: KObject = { metadata: { name: 'p', labels: { a: '1' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  const mf = updateManagedFields(null, obj, w('kubectl-create'));
  t.is(mf.length, 1);
  t.deepEqual(mf[0].fieldsV1, {
    'f:metadata': { 'f:labels': { 'f:a': {} } },
    'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:name': {}, 'f:image': {} } } },
  });
});

test('ownership passes to the manager that changes a field', (t) => {
  const a: KObject = { metadata: { name: 'p', labels: { a: '1' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  a.metadata.managedFields = updateManagedFields(null, a, w('one'));
  const b: KObject = structuredClone(a);
  b.spec = { containers: [{ name: 'c', image: 'j' }] };
  const mf = updateManagedFields(a, b, w('two'));
  const one = mf.find((m) => m.manager === 'one')!;
  const two = mf.find((m) => m.manager === 'two')!;
  t.deepEqual(two.fieldsV1, { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:image': {} } } } });
  t.falsy((one.fieldsV1 as Record<string, Record<string, Record<string, Record<string, unknown>>>>)['f:spec']['f:containers']['k:{"name":"c"}']['f:image']);
});

test('field manager from the User-Agent product token', (t) => {
  t.is(managerFromUserAgent('kubectl/v1.32.4 (linux/amd64) kubernetes/abc'), 'kubectl');
  t.is(managerFromUserAgent(undefined), 'unknown');
});
