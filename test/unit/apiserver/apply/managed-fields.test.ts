import test from 'ava';
import type { ObjectSchema } from '../../../../apiserver/api/schema';
import type { KObject } from '../../../../apiserver/api/types';
import { EMPTY } from '../../../../apiserver/apply/field-set';
import { managedFieldsAfterWrite } from '../../../../apiserver/apply/field-manager';
import { managerFromUserAgent } from '../../../../apiserver/apply/managers';

const schema: ObjectSchema = {
  type: 'object',
  properties: {
    metadata: { type: 'object', properties: { labels: { type: 'map', values: { type: 'string' } } } },
    spec: {
      type: 'object',
      // Required, as PodSpec.containers: a Go field without omitempty, so the list is there (null) before the create.
      required: ['containers'],
      properties: {
        containers: { type: 'array', listType: 'map', mapKeys: ['name'], items: { type: 'object', properties: { name: { type: 'string' }, image: { type: 'string' } } } },
      },
    },
  },
};
const scope = { schema, apiVersion: 'v1', time: '2026-01-01T00:00:00Z', subresource: '', ignore: EMPTY };
/** The managedFields after `manager` wrote next over prev (null: a create). */
const updateManagedFields = (prev: KObject | null, next: KObject, manager: string) => managedFieldsAfterWrite(prev, next, manager, scope)!;
const w = (manager: string) => manager;

// The expected sets are upstream's for the same create (kubectl create's managedFields): a map
// that the create adds is owned itself too ("."), a required list is not (Go has it, as null).
test('create gives the writer every field, with keyed list entries', (t) => {
  const obj: KObject = { metadata: { name: 'p', labels: { a: '1' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  const mf = updateManagedFields(null, obj, w('kubectl-create'));
  t.is(mf.length, 1);
  t.deepEqual(mf[0].fieldsV1, {
    'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
    'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:name': {}, 'f:image': {} } } },
  });
  // In upstream's element order: "." first, then field names sorted.
  t.deepEqual(Object.keys((mf[0].fieldsV1 as any)['f:spec']['f:containers']['k:{"name":"c"}']), ['.', 'f:image', 'f:name']);
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
