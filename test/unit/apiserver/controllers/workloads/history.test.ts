import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { sameRevisionData, sortRevisions, templatePatch, withRevisionTemplate } from '../../../../../apiserver/controllers/workloads/history';
import { canonicalJson, computeTemplateHash, controllerRevisionName, fnv32, fnv32a, hashRevisionData, safeEncodeString } from '../../../../../apiserver/controllers/workloads/revision-hash';
import { claimOwnerRefs, claimOwnersMatch, newStatefulSetPod, parentAndOrdinal } from '../../../../../apiserver/controllers/workloads/statefulset-identity';

test('FNV-1 and FNV-1a 32-bit match the reference vectors', (t) => {
  const b = (s: string) => Buffer.from(s);
  t.is(fnv32(b('')), 0x811c9dc5);
  t.is(fnv32(b('a')), 0x050c5d7e);
  t.is(fnv32(b('foobar')), 0x31f0b262);
  t.is(fnv32a(b('a')), 0xe40c292c);
  t.is(fnv32a(b('foobar')), 0xbf9cf968);
});

test('hashes are spelled with upstream SafeEncodeString; equal templates hash equal whatever their key order; the collision count changes the hash', (t) => {
  t.is(safeEncodeString('0123456789'), '456789bcdf');
  const a = { metadata: { labels: { app: 'web', tier: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  const b = { spec: { containers: [{ image: 'i', name: 'c' }] }, metadata: { labels: { tier: 'x', app: 'web' } } };
  t.is(canonicalJson(a), canonicalJson(b));
  t.is(computeTemplateHash(a), computeTemplateHash(b));
  t.not(computeTemplateHash(a, 1), computeTemplateHash(a));
  t.is(hashRevisionData(a), hashRevisionData(b));
  t.not(hashRevisionData(a, 0), hashRevisionData(a), 'a collision count of 0 still counts, as upstream hashes the pointer when set');
  t.regex(hashRevisionData(a), /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  t.is(controllerRevisionName('x'.repeat(300), 'h').length, 223 + 2);
});

test('revision data is a template patch that restores the template; revisions sort by number, then age, then name', (t) => {
  const set: KObject = { metadata: { name: 'web' }, spec: { replicas: 3, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'v1' }] } } } };
  const data = templatePatch(set);
  t.deepEqual(data, { spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'v1' }] }, $patch: 'replace' } } });
  const changed = structuredClone(set) as any;
  changed.spec.template.spec.containers[0].image = 'v2';
  changed.spec.replicas = 5;
  const restored = withRevisionTemplate(changed, { metadata: {}, data });
  t.deepEqual((restored.spec as any).template, (set.spec as any).template);
  t.is((restored.spec as any).replicas, 5, 'only the template comes from the revision');
  t.true(sameRevisionData({ metadata: {}, data }, { metadata: {}, data: templatePatch(structuredClone(set)) }));
  t.false(sameRevisionData({ metadata: {}, data }, { metadata: {}, data: templatePatch(changed) }));
  const r = (name: string, revision: number, ts: string): KObject => ({ metadata: { name, creationTimestamp: ts }, revision });
  t.deepEqual(sortRevisions([r('c', 2, '2025-01-01T00:00:00Z'), r('b', 1, '2025-01-02T00:00:00Z'), r('a', 1, '2025-01-02T00:00:00Z'), r('d', 1, '2025-01-01T00:00:00Z')]).map((x) => x.metadata.name), ['d', 'a', 'b', 'c']);
});

test('StatefulSet pod names carry the ordinal; claims follow the retention policy through owner references', (t) => {
  t.deepEqual(parentAndOrdinal({ metadata: { name: 'web-12' } }), { parent: 'web', ordinal: 12 });
  t.deepEqual(parentAndOrdinal({ metadata: { name: 'my-web-0' } }), { parent: 'my-web', ordinal: 0 });
  t.deepEqual(parentAndOrdinal({ metadata: { name: 'web' } }), { parent: '', ordinal: -1 });
  t.deepEqual(parentAndOrdinal({ metadata: { name: 'web-99999999999' } }).ordinal, -1);
  const set = (whenDeleted: string, whenScaled: string): KObject => ({
    metadata: { name: 'db', namespace: 'ns', uid: 'set-uid' },
    spec: { replicas: 1, persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled }, template: { spec: { containers: [] } } },
  });
  const pod = (ordinal: number): KObject => ({ metadata: { name: `db-${ordinal}`, uid: `pod-${ordinal}` } });
  const claim: KObject = { metadata: { name: 'data-db-0', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'other' }] } };
  const owners = (s: KObject, p: KObject) => claimOwnerRefs(claim, s, p).map((r) => r.uid);
  t.deepEqual(owners(set('Retain', 'Retain'), pod(0)), ['other']);
  t.deepEqual(owners(set('Delete', 'Retain'), pod(0)), ['other', 'set-uid']);
  t.deepEqual(owners(set('Delete', 'Retain'), pod(1)), ['other', 'set-uid']);
  t.deepEqual(owners(set('Retain', 'Delete'), pod(0)), ['other']);
  t.deepEqual(owners(set('Retain', 'Delete'), pod(1)), ['other', 'pod-1'], 'scaled away: the pod owns it');
  t.deepEqual(owners(set('Delete', 'Delete'), pod(0)), ['other', 'set-uid']);
  t.deepEqual(owners(set('Delete', 'Delete'), pod(1)), ['other', 'pod-1']);
  t.true(claimOwnersMatch(claim, set('Retain', 'Retain'), pod(0)));
  t.false(claimOwnersMatch(claim, set('Delete', 'Retain'), pod(0)));
  const s = { ...set('Retain', 'Retain'), spec: { ...(set('Retain', 'Retain').spec as object), serviceName: 'db', template: { spec: { containers: [], volumes: [{ name: 'data', emptyDir: {} }] } }, volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }] } };
  const made = newStatefulSetPod(s, 0, { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'set-uid', controller: true }, 'db-abc');
  t.deepEqual((made.spec as any).volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } }], 'the claim replaces the template volume of its name');
});

test('regression: a template re-spelled with nulls or empty lists hashes as before (no new revision, no rollout)', (t) => {
  const a = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  const b = { metadata: { labels: { app: 'web' }, creationTimestamp: null }, spec: { containers: [{ name: 'c', image: 'i', env: [] }], tolerations: null } };
  t.is(hashRevisionData(templatePatch({ metadata: {}, spec: { template: a } })), hashRevisionData(templatePatch({ metadata: {}, spec: { template: b } })));
  t.is(computeTemplateHash(a), computeTemplateHash(b));
  t.not(computeTemplateHash(a), computeTemplateHash({ ...a, spec: { ...a.spec, securityContext: { runAsUser: 0 } } }));
});
