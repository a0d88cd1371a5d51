import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { adminCtx, openFixture, type Fixture } from '../../controllers/store-fixture';
import { crd, specSchema } from './crd-fixtures';

// CustomResourceDefinitions accepted and refused through the store, with upstream's field paths and messages.

let f: Fixture;
test.before(async () => {
  f = await openFixture();
});
test.after.always(() => f?.close());

const crds = () => f.type('apiextensions.svc.io', 'v1', 'customresourcedefinitions');

async function refused(o: KObject): Promise<string> {
  const err = await f.store.create(crds(), '', o, { ...adminCtx, dryRun: true }).then(
    () => undefined,
    (e: Error) => e,
  );
  if (!err) throw new Error('the CRD was accepted');
  return err.message;
}

test('a valid CRD is accepted and defaulted: singular, listKind, conversion None, storedVersions', async (t) => {
  const out = await f.store.create(crds(), '', crd(), { ...adminCtx, dryRun: true });
  const spec = out.spec as Record<string, any>;
  t.is(spec.names.singular, 'widget');
  t.is(spec.names.listKind, 'WidgetList');
  t.deepEqual(spec.conversion, { strategy: 'None' });
  t.deepEqual((out.status as Record<string, unknown>).storedVersions, ['v1']);
});

test('metadata.name must be <plural>.<group>', async (t) => {
  const o = crd();
  o.metadata.name = 'gadgets.example.com';
  t.regex(await refused(o), /metadata\.name: Invalid value: "gadgets\.example\.com": must be spec\.names\.plural\+"\."\+spec\.group/);
});

test('scope is required and Cluster or Namespaced', async (t) => {
  const none = crd();
  delete (none.spec as Record<string, unknown>).scope;
  t.regex(await refused(none), /spec\.scope: Required value/);
  t.regex(await refused(crd({ scope: 'Global' })), /spec\.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"/);
});

test('group must be a domain with a dot', async (t) => {
  const o = crd({ group: 'example' });
  t.regex(await refused(o), /spec\.group: Invalid value: "example": should be a domain with at least one dot/);
});

test('names: plural lowercase DNS label, kind required, kind and listKind differ, short names and categories are labels', async (t) => {
  const upper = crd({ names: { plural: 'Widgets' } });
  t.regex(await refused(upper), /spec\.names\.plural: Invalid value: "Widgets": a DNS-1035 label must consist of lower case alphanumeric characters/);
  t.regex(await refused(crd({ kind: '' })), /spec\.names\.kind: Required value/);
  t.regex(await refused(crd({ names: { listKind: 'Widget' } })), /spec\.names\.listKind: Invalid value: "Widget": kind and listKind may not be the same/);
  t.regex(await refused(crd({ names: { shortNames: ['W_1'] } })), /spec\.names\.shortNames\[0\]: Invalid value: "W_1"/);
  t.regex(await refused(crd({ names: { categories: ['All Things'] } })), /spec\.names\.categories\[0\]: Invalid value: "All Things"/);
});

test('versions: exactly one storage version, at least one served, unique names', async (t) => {
  const v = (name: string, served: boolean, storage: boolean) => ({ name, served, storage, schema: { openAPIV3Schema: { type: 'object' } } });
  t.regex(await refused(crd({ versions: [v('v1', true, true), v('v2', true, true)] })), /spec\.versions: Invalid value: .*: must have exactly one version marked as storage version/);
  t.regex(await refused(crd({ versions: [v('v1', true, false)] })), /must have exactly one version marked as storage version/);
  t.regex(await refused(crd({ versions: [v('v1', false, true)] })), /spec\.versions: Invalid value: .*: must have at least one version marked as served/);
  t.regex(await refused(crd({ versions: [v('v1', true, true), v('v1', true, false)] })), /spec\.versions: Invalid value: .*: must contain unique version names/);
  t.regex(await refused(crd({ versions: [v('V1', true, true)] })), /spec\.versions\[0\]\.name: Invalid value: "V1"/);
});

test('preserveUnknownFields: true is refused in v1', async (t) => {
  const o = crd();
  (o.spec as Record<string, unknown>).preserveUnknownFields = true;
  t.regex(await refused(o), /spec\.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec\.versions\[\*\]\.schema instead/);
});

test('a schema is required on every version', async (t) => {
  t.regex(await refused(crd({ version: { schema: undefined } })), /spec\.versions\[0\]\.schema\.openAPIV3Schema: Required value: schemas are required/);
});

test('structural: every node has a type, except under int-or-string and preserve-unknown-fields', async (t) => {
  const base = 'spec.versions[0].schema.openAPIV3Schema';
  const esc = (s: string) => s.replace(/[.[\]*]/g, '\\$&');
  t.regex(await refused(crd({ schema: specSchema({ size: { minimum: 1 } }) })), new RegExp(`${esc(`${base}.properties[spec].properties[size].type`)}: Required value: must not be empty for specified object fields`));
  t.regex(await refused(crd({ schema: specSchema({ list: { type: 'array', items: { description: 'x' } } }) })), new RegExp(`${esc(`${base}.properties[spec].properties[list].items.type`)}: Required value: must not be empty for specified array items`));
  t.regex(await refused(crd({ schema: specSchema({ list: { type: 'array' } }) })), /properties\[list\]\.items: Required value: must be specified/);
  t.regex(await refused(crd({ schema: { type: 'string' } })), new RegExp(`${esc(`${base}.type`)}: Invalid value: "string": must be object at the root`));
  // Allowed: no type below int-or-string or preserve-unknown-fields.
  await t.notThrowsAsync(f.store.create(crds(), '', crd({ schema: specSchema({ port: { 'x-kubernetes-int-or-string': true }, raw: { 'x-kubernetes-preserve-unknown-fields': true } }) }), { ...adminCtx, dryRun: true }));
  t.regex(await refused(crd({ schema: specSchema({ port: { type: 'string', 'x-kubernetes-int-or-string': true } }) })), /properties\[port\]\.type: Invalid value: "string": must be empty if x-kubernetes-int-or-string is true/);
  t.regex(await refused(crd({ schema: specSchema({ raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } }) })), /x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined/);
});

test('structural: properties and additionalProperties are exclusive; $ref, uniqueItems and friends are refused', async (t) => {
  t.regex(
    await refused(crd({ schema: specSchema({ m: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } }) })),
    /properties\[m\]\.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive/,
  );
  t.regex(await refused(crd({ schema: specSchema({ r: { $ref: '#/definitions/x' } }) })), /properties\[r\]\.\$ref: Forbidden: \$ref is not supported/);
  t.regex(await refused(crd({ schema: specSchema({ l: { type: 'array', items: { type: 'string' }, uniqueItems: true } }) })), /uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic/);
});

test('structural: metadata at the root may only restrict name and generateName', async (t) => {
  const schema = { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } };
  t.regex(await refused(crd({ schema })), /openAPIV3Schema\.properties\[metadata\]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified/);
  const ok = { type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } } } };
  await t.notThrowsAsync(f.store.create(crds(), '', crd({ schema: ok }), { ...adminCtx, dryRun: true }));
});

test('list and map markers: list-map-keys needed by map lists, allowed only on them, map-type on objects', async (t) => {
  const item = { type: 'object', properties: { name: { type: 'string' } } };
  t.regex(await refused(crd({ schema: specSchema({ l: { type: 'array', items: item, 'x-kubernetes-list-type': 'map' } }) })), /x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map/);
  t.regex(await refused(crd({ schema: specSchema({ l: { type: 'array', items: item, 'x-kubernetes-list-map-keys': ['name'] } }) })), /x-kubernetes-list-map-keys: Forbidden: must not be set if x-kubernetes-list-type is not map/);
  t.regex(await refused(crd({ schema: specSchema({ l: { type: 'array', items: item, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['id'] } }) })), /x-kubernetes-list-map-keys\[0\]: Invalid value: "id": entries must all be names of item properties/);
  t.regex(await refused(crd({ schema: specSchema({ l: { type: 'array', items: item, 'x-kubernetes-list-type': 'bag' } }) })), /x-kubernetes-list-type: Unsupported value: "bag"/);
  t.regex(await refused(crd({ schema: specSchema({ s: { type: 'string', 'x-kubernetes-map-type': 'atomic' } }) })), /properties\[s\]\.type: Invalid value: "string": must be object if x-kubernetes-map-type is specified/);
});

test('printer columns, scale paths, selectable fields and conversion are checked', async (t) => {
  t.regex(await refused(crd({ version: { additionalPrinterColumns: [{ name: 'X', type: 'text', jsonPath: '.spec.x' }] } })), /additionalPrinterColumns\[0\]\.type: Invalid value: "text": must be one of boolean,date,integer,number,string/);
  t.regex(await refused(crd({ version: { additionalPrinterColumns: [{ name: 'X', type: 'string', jsonPath: 'spec.x' }] } })), /additionalPrinterColumns\[0\]\.jsonPath: Invalid value: "spec\.x": must be a simple json path starting with \./);
  t.regex(await refused(crd({ version: { subresources: { scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '.status.replicas' } } } })), /subresources\.scale\.specReplicasPath: Invalid value: "\.status\.replicas": should be a json path under \.spec/);
  t.regex(await refused(crd({ version: { selectableFields: [{ jsonPath: '.metadata.name' }] } })), /selectableFields\[0\]\.jsonPath: Invalid value: "\.metadata\.name"/);
  const webhook = crd();
  (webhook.spec as Record<string, unknown>).conversion = { strategy: 'Webhook' };
  t.regex(await refused(webhook), /spec\.conversion\.webhook: Required value: required when strategy is set to Webhook/);
});

test('group and plural never change; scope and kind not once Established', async (t) => {
  const created = await f.store.create(crds(), '', crd({ plural: 'gizmos', kind: 'Gizmo' }), adminCtx);
  const upd = (fn: (o: KObject) => void) =>
    f.store.update(crds(), '', created.metadata.name!, (cur) => {
      const o = structuredClone(cur!);
      fn(o);
      return o;
    }, adminCtx);
  // Not established yet: the scope may change.
  await t.notThrowsAsync(upd((o) => ((o.spec as Record<string, unknown>).scope = 'Cluster')));
  await t.throwsAsync(upd((o) => ((o.spec as Record<string, any>).names.plural = 'gadgets')), { message: /spec\.names\.plural: Invalid value: "gadgets": field is immutable/ });
  await f.store.update(crds(), '', created.metadata.name!, (cur) => ({ ...cur!, status: { ...(cur!.status as object), conditions: [{ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'x', lastTransitionTime: '2025-01-01T00:00:00Z' }] } }), { ...adminCtx, subresource: 'status' });
  await t.throwsAsync(upd((o) => ((o.spec as Record<string, unknown>).scope = 'Namespaced')), { message: /spec\.scope: Invalid value: "Namespaced": field is immutable/ });
});

test('conversion: Webhook needs a client config and recognised review versions, with upstream paths and messages', async (t) => {
  const withConversion = (conversion: unknown, extra: Record<string, unknown> = {}) => {
    const o = crd();
    Object.assign(o.spec as Record<string, unknown>, { conversion, ...extra });
    return o;
  };
  t.regex(await refused(withConversion({ strategy: 'Webhook', webhook: {} })), /spec\.conversion\.webhook\.clientConfig: Required value: required when strategy is set to Webhook/);
  t.regex(await refused(withConversion({ strategy: 'Webhook', webhook: {} })), /spec\.conversion\.webhook\.conversionReviewVersions: Required value: must include at least one of v1, v1beta1/);
  const hook = (clientConfig: unknown, versions: unknown = ['v1']) => withConversion({ strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions: versions } });
  t.regex(await refused(hook({})), /spec\.conversion\.webhook\.clientConfig: Required value: exactly one of url or service is required/);
  t.regex(await refused(hook({ url: 'http://conv.example.com/x' })), /spec\.conversion\.webhook\.clientConfig\.url: Invalid value: "http": 'https' is the only allowed URL scheme/);
  t.regex(await refused(hook({ url: 'https://conv.example.com/x?a=b' })), /query parameters are not permitted in the URL/);
  t.regex(await refused(hook({ service: { namespace: 'ns', name: 'conv', path: 'convert' } })), /spec\.conversion\.webhook\.clientConfig\.service\.path: Invalid value: "convert": must start with a '\/'/);
  t.regex(await refused(hook({ service: { namespace: 'ns', name: '' } })), /spec\.conversion\.webhook\.clientConfig\.service\.name: Required value: service name is required/);
  t.regex(await refused(hook({ url: 'https://conv.example.com/x' }, ['v2', 'v3'])), /spec\.conversion\.webhook\.conversionReviewVersions: Invalid value: \["v2","v3"\]: must include at least one of v1, v1beta1/);
  t.regex(await refused(hook({ url: 'https://conv.example.com/x' }, ['v1', 'v1'])), /spec\.conversion\.webhook\.conversionReviewVersions\[1\]: Invalid value: "v1": duplicate version/);
  t.regex(await refused(withConversion({ strategy: 'None', webhook: { clientConfig: { url: 'https://a.example.com' } } })), /spec\.conversion\.webhook: Forbidden: should not be set when strategy is not set to Webhook/);
  t.regex(await refused(withConversion({ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a.example.com' }, conversionReviewVersions: ['v1'] } }, { preserveUnknownFields: true })), /spec\.conversion\.strategy: Invalid value: "Webhook": must be None if spec\.preserveUnknownFields is true/);
  // A valid one is accepted.
  const ok = hook({ service: { namespace: 'ns', name: 'conv', path: '/convert', port: 8443 }, caBundle: Buffer.from('pem').toString('base64') }, ['v1', 'v1beta1']);
  await t.notThrowsAsync(f.store.create(crds(), '', ok, { ...adminCtx, dryRun: true }));
});
