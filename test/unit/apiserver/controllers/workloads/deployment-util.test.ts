import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { computeHash, equalIgnoreHash, maxSurge, maxUnavailable, resolveFenceposts, setNewReplicaSetAnnotations } from '../../../../../apiserver/controllers/workloads/deployment-util';

test('computeHash: one value per template whatever the key order; collisionCount changes it; upstream alphabet', (t) => {
  const a = { metadata: { labels: { app: 'web', tier: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  const b = { spec: { containers: [{ image: 'i', name: 'c' }] }, metadata: { labels: { tier: 'x', app: 'web' } } };
  t.is(computeHash(a), computeHash(b));
  t.not(computeHash(a), computeHash(a, 1));
  t.not(computeHash(a, 1), computeHash(a, 2));
  t.not(computeHash(a), computeHash({ ...a, spec: { containers: [{ name: 'c', image: 'j' }] } }));
  t.regex(computeHash(a, 7), /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
});

test('equalIgnoreHash ignores only the pod-template-hash label', (t) => {
  const tpl = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };
  t.true(equalIgnoreHash(tpl, { ...tpl, metadata: { labels: { app: 'web', 'pod-template-hash': 'abc' } } }));
  t.false(equalIgnoreHash(tpl, { ...tpl, metadata: { labels: { app: 'web', other: 'x' } } }));
  // Go's encoding of a template (kubectl rollout undo) has creationTimestamp: null; it is the same template.
  const fromGo = { ...tpl, metadata: { ...tpl.metadata, creationTimestamp: null } };
  t.true(equalIgnoreHash(tpl, fromGo));
  t.is(computeHash(fromGo), computeHash(tpl));
  // A pointer set to 0 is a value: a new template, not a re-spelling.
  const root = { ...tpl, spec: { ...tpl.spec, securityContext: { runAsUser: 0 } } };
  t.false(equalIgnoreHash(tpl, root));
  t.not(computeHash(root), computeHash(tpl));
});

test('fenceposts: surge rounds up, unavailable down, never both zero; Recreate has neither', (t) => {
  t.deepEqual(resolveFenceposts('25%', '25%', 10), { surge: 3, unavailable: 2 });
  t.deepEqual(resolveFenceposts('25%', '25%', 1), { surge: 1, unavailable: 0 });
  t.deepEqual(resolveFenceposts(0, '10%', 5), { surge: 0, unavailable: 1 });
  const d = (strategy: unknown, replicas = 4): KObject => ({ metadata: {}, spec: { replicas, strategy } });
  t.is(maxUnavailable(d({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 10 } })), 4);
  t.is(maxUnavailable(d({ type: 'Recreate' })), 0);
  t.is(maxSurge(d({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '50%', maxUnavailable: 0 } })), 2);
});

test('setNewReplicaSetAnnotations: copies the Deployment\'s annotations but its own, raises the revision and keeps history', (t) => {
  const d: KObject = { metadata: { annotations: { 'kubernetes.io/change-cause': 'v3', 'deployment.kubernetes.io/revision': '9', 'kubectl.kubernetes.io/last-applied-configuration': '{}' } }, spec: { replicas: 2, strategy: { type: 'Recreate' } } };
  const rs: KObject = { metadata: { annotations: { 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/revision-history': '0' } }, spec: { replicas: 0 } };
  t.true(setNewReplicaSetAnnotations(d, rs, 3, true));
  t.deepEqual(rs.metadata.annotations, { 'kubernetes.io/change-cause': 'v3', 'deployment.kubernetes.io/revision': '3', 'deployment.kubernetes.io/revision-history': '0,1' });
  t.false(setNewReplicaSetAnnotations(d, rs, 3, true));
  const fresh: KObject = { metadata: {}, spec: { replicas: 2 } };
  setNewReplicaSetAnnotations(d, fresh, 1, false);
  t.like(fresh.metadata.annotations, { 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/desired-replicas': '2', 'deployment.kubernetes.io/max-replicas': '2' });
});
