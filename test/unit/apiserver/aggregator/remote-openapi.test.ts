import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import type { RemoteGet } from '../../../../apiserver/aggregator/discovery-check';
import { RemoteApis } from '../../../../apiserver/aggregator/remote-apis';
import { mergeOpenApiV2, mergeOpenApiV3Index, openApiDue, openApiFetcher, OPENAPI_REFRESH_MS, remoteOpenApiV3 } from '../../../../apiserver/aggregator/remote-openapi';

// The aggregated servers' OpenAPI documents: fetched, cached, merged into the served ones.

type Rec = Record<string, any>;

const apiService = (name: string, group: string, version: string, port = 443): KObject => ({
  apiVersion: 'apiregistration.svc.io/v1',
  kind: 'APIService',
  metadata: { name },
  spec: { group, version, service: { namespace: 'ns', name: 'svc', port }, groupPriorityMinimum: 100, versionPriority: 10 },
});

const v2Spec = {
  swagger: '2.0',
  paths: {
    '/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders': { get: { operationId: 'listFlunder' } },
    '/apis/other.example.com/v1/things': { get: { operationId: 'notItsOwn' } },
    '/version': { get: { operationId: 'version' } },
  },
  definitions: { 'com.example.wardle.v1alpha1.Flunder': { type: 'object' }, 'local.v1.Taken': { type: 'string', description: 'remote' } },
};
const v3Doc = { openapi: '3.0.0', paths: {}, components: { schemas: { 'com.example.wardle.v1alpha1.Flunder': { type: 'object' } } } };

function remote(available: boolean): RemoteApis {
  const r = new RemoteApis();
  r.upsert(apiService('v1alpha1.wardle.example.com', 'wardle.example.com', 'v1alpha1'));
  r.setState('v1alpha1.wardle.example.com', { available, resources: {}, openapi: { v2: structuredClone(v2Spec), v3: v3Doc, fetchedAt: 1 } });
  return r;
}

test('v2: the server\'s own group version paths and its new definitions are merged; nothing local is replaced', (t) => {
  const local = { swagger: '2.0', paths: { '/api/v1/pods': {} }, definitions: { 'local.v1.Taken': { type: 'object', description: 'local' } } };
  const doc: Rec = mergeOpenApiV2(local, remote(true));
  t.deepEqual(Object.keys(doc.paths).sort(), ['/api/v1/pods', '/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders']);
  t.deepEqual(doc.definitions['com.example.wardle.v1alpha1.Flunder'], { type: 'object' });
  t.is(doc.definitions['local.v1.Taken'].description, 'local');
  // An unavailable server contributes nothing.
  const none: Rec = mergeOpenApiV2({ swagger: '2.0', paths: {}, definitions: {} }, remote(false));
  t.deepEqual(none.paths, {});
});

test('v3: the index lists the group version with its document\'s hash; the document is served from the cache', (t) => {
  const index: Rec = mergeOpenApiV3Index({ paths: { 'api/v1': { serverRelativeURL: '/openapi/v3/api/v1?hash=AB' } } }, remote(true));
  t.regex(index.paths['apis/wardle.example.com/v1alpha1'].serverRelativeURL, /^\/openapi\/v3\/apis\/wardle\.example\.com\/v1alpha1\?hash=[0-9A-F]{32}$/);
  t.is(index.paths['api/v1'].serverRelativeURL, '/openapi/v3/api/v1?hash=AB');
  t.is(remoteOpenApiV3(remote(true), 'apis/wardle.example.com/v1alpha1'), v3Doc);
  t.is(remoteOpenApiV3(remote(false), 'apis/wardle.example.com/v1alpha1'), undefined);
  t.is(remoteOpenApiV3(remote(true), 'apis/other.example.com/v1'), undefined);
});

test('refreshed when missing, when discovery changed, or a minute old; the cache goes when the APIService\'s target changes', (t) => {
  t.true(openApiDue(undefined, 0, false));
  t.false(openApiDue({ fetchedAt: 1000 }, 1000 + OPENAPI_REFRESH_MS - 1, false));
  t.true(openApiDue({ fetchedAt: 1000 }, 1000 + OPENAPI_REFRESH_MS - 1, true));
  t.true(openApiDue({ fetchedAt: 1000 }, 1000 + OPENAPI_REFRESH_MS, false));
  const r = remote(true);
  r.upsert(apiService('v1alpha1.wardle.example.com', 'wardle.example.com', 'v1alpha1'));
  t.truthy(r.lookup('wardle.example.com', 'v1alpha1')?.state.openapi, 'the same target keeps it');
  r.upsert(apiService('v1alpha1.wardle.example.com', 'wardle.example.com', 'v1alpha1', 8443));
  t.is(r.lookup('wardle.example.com', 'v1alpha1')?.state.openapi, undefined);
});

test('the fetcher asks for /openapi/v2 and the group version\'s v3 document, bounded; what fails or is not JSON is left out', async (t) => {
  const asked: Array<[string, number]> = [];
  const get: RemoteGet = (_api, _target, path, maxBytes) => {
    asked.push([path, maxBytes]);
    if (path === '/openapi/v2') return Promise.resolve({ status: 200, body: v2Spec });
    return Promise.resolve({ status: 404, body: { kind: 'Status' } });
  };
  const r = remote(true);
  const api = r.lookup('wardle.example.com', 'v1alpha1')!.api;
  const got = await openApiFetcher(get, () => 42)(api, { host: 'h', port: 1, servername: 'svc.ns.svc' });
  t.deepEqual(got, { v2: v2Spec, fetchedAt: 42 });
  t.deepEqual(asked.map(([p]) => p).sort(), ['/openapi/v2', '/openapi/v3/apis/wardle.example.com/v1alpha1']);
  t.true(asked.every(([, max]) => max === 8 * 1024 * 1024));
  const failing: RemoteGet = () => Promise.reject(new Error('unreachable'));
  t.deepEqual(await openApiFetcher(failing, () => 7)(api, { host: 'h', port: 1, servername: 's' }), { fetchedAt: 7 });
});
