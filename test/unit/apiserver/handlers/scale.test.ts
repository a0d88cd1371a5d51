import test from 'ava';
import { decodeObject, encodeObject } from '../../../../apiserver/codec/envelope';
import type { ResourceRequest } from '../../../../apiserver/handlers/context';
import { handleScale } from '../../../../apiserver/handlers/scale';
import type { KObject } from '../../../../apiserver/api/types';
import { scaleSchema } from '../../../../apiserver/registry/types/autoscaling-scale';
import { Discovery } from '../../../../apiserver/server/discovery';
import { admin, withStore, type StoreFixture } from '../store/fixture';
import { call } from './fake-http';

const SCALE = '/apis/apps/v1/namespaces/default/deployments/web/scale';
const PB = 'application/vnd.kubernetes.protobuf';

/** The router's dispatch: the type's own scale declaration. */
const scale = (r: ResourceRequest) => handleScale(r, r.type.scale!);

async function withDeployment(body: (f: StoreFixture, d: KObject) => Promise<void>): Promise<void> {
  await withStore(async (f) => {
    const d = await f.store.create(
      f.type('deployments', 'apps'),
      'default',
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: { replicas: 2, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] }, template: { metadata: { labels: { app: 'web', tier: 'a' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
      },
      admin,
    );
    await body(f, d);
  });
}

test('GET answers an autoscaling/v1 Scale: name, uid, resourceVersion, desired and observed replicas, the selector as a string', (t) =>
  withDeployment(async (f, d) => {
    const res = await call(f, scale, 'GET', SCALE);
    t.is(res.statusCode, 200);
    t.deepEqual(res.body, {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'web', namespace: 'default', uid: d.metadata.uid, resourceVersion: d.metadata.resourceVersion, creationTimestamp: d.metadata.creationTimestamp },
      spec: { replicas: 2 },
      status: { replicas: 0, selector: 'app=web,tier in (a,b)' },
    });
  }));

test('PATCH (merge, as kubectl scale sends) sets spec.replicas, bumps the generation, and answers the new Scale', (t) =>
  withDeployment(async (f, d) => {
    const res = await call(f, scale, 'PATCH', SCALE, { body: { spec: { replicas: 5 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    t.is(res.statusCode, 200, res.text);
    t.is(res.body.spec.replicas, 5);
    const stored = await f.store.get(f.type('deployments', 'apps'), 'default', 'web');
    t.is((stored.spec as { replicas: number }).replicas, 5);
    t.is(stored.metadata.generation, (d.metadata.generation ?? 1) + 1);
    t.is(res.body.metadata.resourceVersion, stored.metadata.resourceVersion);
    // The write went through the store as the scale sub-resource (admission sees it so).
    t.like(f.admitted.at(-1), { operation: 'UPDATE', resource: 'deployments', subresource: 'scale' });
    const json = await call(f, scale, 'PATCH', SCALE, { body: [{ op: 'replace', path: '/spec/replicas', value: 0 }], headers: { 'content-type': 'application/json-patch+json' } });
    t.is(json.statusCode, 200);
    t.deepEqual(json.body.spec, {});
  }));

test('PUT: a stale resourceVersion is 409, a wrong uid 409, negative replicas 422 with upstream\'s message, a wrong kind 400', (t) =>
  withDeployment(async (f, d) => {
    const body = (o: Record<string, unknown> = {}, spec: Record<string, unknown> = { replicas: 3 }) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', ...o }, spec });
    const ok = await call(f, scale, 'PUT', SCALE, { body: body({ resourceVersion: d.metadata.resourceVersion }) });
    t.is(ok.statusCode, 200, ok.text);
    const stale = await call(f, scale, 'PUT', SCALE, { body: body({ resourceVersion: d.metadata.resourceVersion }) });
    t.is(stale.statusCode, 409);
    const uid = await call(f, scale, 'PUT', SCALE, { body: body({ uid: 'other' }) });
    t.is(uid.statusCode, 409);
    t.regex(uid.body.message, /Precondition failed: UID in precondition: other/);
    const neg = await call(f, scale, 'PUT', SCALE, { body: body({}, { replicas: -1 }) });
    t.is(neg.statusCode, 422);
    t.is(neg.body.message, 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
    const kind = await call(f, scale, 'PUT', SCALE, { body: { ...body(), apiVersion: 'apps/v1', kind: 'Deployment' } });
    t.is(kind.statusCode, 400);
    t.is((await call(f, scale, 'DELETE', SCALE)).statusCode, 405);
  }));

test('protobuf: a Scale body in, a Scale message out (client-go\'s scale client)', (t) =>
  withDeployment(async (f) => {
    const raw = encodeObject(scaleSchema, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas: 4 } });
    const res = await call(f, scale, 'PUT', SCALE, { raw, headers: { 'content-type': PB, accept: PB } });
    t.is(res.statusCode, 200);
    t.is(res.headers['content-type'], PB);
    const out = decodeObject(scaleSchema, res.bytes);
    t.like(out, { apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 4 }, status: { replicas: 0, selector: 'app=web,tier in (a,b)' } });
  }));

test('ReplicaSets scale the same way; discovery lists {resource}/scale as autoscaling/v1 Scale', (t) =>
  withStore(async (f) => {
    await f.store.create(
      f.type('replicasets', 'apps'),
      'default',
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs' }, spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } },
      admin,
    );
    const res = await call(f, scale, 'PATCH', '/apis/apps/v1/namespaces/default/replicasets/rs/scale', { body: { spec: { replicas: 7 } }, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    t.is(res.statusCode, 200);
    t.like(res.body, { kind: 'Scale', spec: { replicas: 7 }, status: { selector: 'a=b' } });
    const discovery = new Discovery(() => f.registry.all());
    const apps = discovery.resources('apps', 'v1')!.resources as Record<string, unknown>[];
    t.deepEqual(apps.find((r) => r.name === 'deployments/scale'), { name: 'deployments/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
    const agg = discovery.aggregated(false, 'apidiscovery.k8s.io/v2') as { items: Array<{ metadata: { name?: string }; versions: Array<{ resources: Array<Record<string, any>> }> }> };
    const rs = agg.items.find((i) => i.metadata.name === 'apps')!.versions[0].resources.find((r) => r.resource === 'replicasets')!;
    t.deepEqual(rs.subresources.map((s: { subresource: string; responseKind: unknown }) => [s.subresource, s.responseKind]), [
      ['status', { group: 'apps', version: 'v1', kind: 'ReplicaSet' }],
      ['scale', { group: 'autoscaling', version: 'v1', kind: 'Scale' }],
    ]);
  }));
