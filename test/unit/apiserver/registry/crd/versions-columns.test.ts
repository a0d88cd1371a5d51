import test from 'ava';
import { customResourceTypes } from '../../../../../apiserver/registry/crd/custom-type';
import { evalJsonPath, parseJsonPath } from '../../../../../apiserver/registry/crd/json-path';
import { objectKey } from '../../../../../apiserver/store/keys';
import { adminCtx, openFixture } from '../../controllers/store-fixture';
import { crd, specSchema } from './crd-fixtures';

// Several versions over one storage (conversion None), printer columns, selectable fields, scale and deprecation.

const schema = { schema: { openAPIV3Schema: specSchema({ replicas: { type: 'integer' }, color: { type: 'string' } }) } };
const twoVersions = crd({
  versions: [
    { name: 'v1', served: true, storage: true, ...schema, additionalPrinterColumns: [{ name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' }, { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', priority: 1 }], selectableFields: [{ jsonPath: '.spec.color' }], subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } } },
    { name: 'v1beta1', served: true, storage: false, deprecated: true, ...schema },
    { name: 'v1alpha1', served: false, storage: false, ...schema },
  ],
});

test('served versions only; the storage version stores, the others are views that rewrite apiVersion', async (t) => {
  const versions = customResourceTypes(twoVersions);
  t.deepEqual(
    versions.map((v) => v.type.version),
    ['v1', 'v1beta1'],
  );
  const [v1, beta] = versions.map((v) => v.type);
  t.is(v1.storedAs, undefined);
  t.like(beta.storedAs, { group: 'example.com', resource: 'widgets' });
  const f = await openFixture();
  t.teardown(() => f.close());
  // Written through v1beta1, stored as v1 under the one key, read back through either.
  const created = await f.store.create(beta, 'default', { apiVersion: 'example.com/v1beta1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { replicas: 2 } }, adminCtx);
  t.is(created.apiVersion, 'example.com/v1beta1');
  // The watch cache hands out stored objects as they are in storage.
  const ac = new AbortController();
  let stored: string | undefined;
  for await (const ev of f.cache.watch(objectKey(v1, 'default', 'w'), Number(created.metadata.resourceVersion) - 1, ac.signal)) {
    stored = ev.object.apiVersion;
    break;
  }
  ac.abort();
  t.is(stored, 'example.com/v1');
  t.is((await f.store.get(v1, 'default', 'w')).apiVersion, 'example.com/v1');
});

test('a Webhook conversion CRD serves only its storage version when no conversion transport is given', (t) => {
  const webhook = structuredClone(twoVersions);
  (webhook.spec as Record<string, unknown>).conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://conv.example.com' }, conversionReviewVersions: ['v1'] } };
  t.deepEqual(
    customResourceTypes(webhook).map((v) => v.type.version),
    ['v1'],
  );
});

test('deprecated versions carry the default warning text, or deprecationWarning', (t) => {
  const [v1, beta] = customResourceTypes(twoVersions).map((v) => v.type);
  t.is(v1.deprecation, undefined);
  t.is(beta.deprecation?.warning, 'example.com/v1beta1 Widget is deprecated');
  const custom = structuredClone(twoVersions);
  ((custom.spec as { versions: Record<string, unknown>[] }).versions[1]).deprecationWarning = 'use v1';
  t.is(customResourceTypes(custom)[1].type.deprecation?.warning, 'use v1');
});

test('printer columns read JSONPath (filters too), selectable fields and scale come from the version', (t) => {
  const v1 = customResourceTypes(twoVersions)[0].type;
  const o = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { replicas: 3, color: 'red' }, status: { conditions: [{ type: 'Synced', status: 'False' }, { type: 'Ready', status: 'True' }] } };
  t.deepEqual(
    v1.tableColumns!.map((c) => [c.name, c.priority, c.cell(o)]),
    [
      ['Ready', 0, 'True'],
      ['Replicas', 1, 3],
    ],
  );
  t.is(v1.fieldSelectors!['spec.color'](o), 'red');
  t.true(v1.hasStatus);
  t.deepEqual(v1.scale, { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' });
  // No columns declared: Age, as upstream.
  const beta = customResourceTypes(twoVersions)[1].type;
  t.deepEqual(beta.tableColumns!.map((c) => c.name), ['Age']);
});

test('the JSONPath subset', (t) => {
  const o = { a: { b: [{ k: 'x', v: 1 }, { k: 'y', v: 2 }] } };
  t.is(evalJsonPath(o, '.a.b[1].v'), 2);
  t.is(evalJsonPath(o, '.a.b[?(@.k=="y")].v'), 2);
  t.is(evalJsonPath(o, ".a.b[?(@.k=='x')].v"), 1);
  t.is(evalJsonPath(o, '.a.c.d'), undefined);
  t.is(parseJsonPath('a.b'), undefined);
  t.is(parseJsonPath('.a..b'), undefined);
});

test('generation: status changes count without a status sub-resource, not with one', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const [withStatus, beta] = customResourceTypes(twoVersions).map((v) => v.type);
  const put = async (ty: typeof withStatus, name: string) => {
    await f.store.create(ty, 'default', { apiVersion: `example.com/${ty.version}`, kind: 'Widget', metadata: { name, namespace: 'default' }, spec: { replicas: 1 } }, adminCtx);
    const sub = ty.hasStatus ? { ...adminCtx, subresource: 'status' } : adminCtx;
    const { object } = await f.store.update(ty, 'default', name, (cur) => ({ ...cur!, status: { replicas: 1 } }), sub);
    return object.metadata.generation;
  };
  t.is(await put(withStatus, 'g1'), 1);
  t.is(await put(beta, 'g2'), 2);
});
