import test from 'ava';
import { labelSelectorString } from '../../../../../apiserver/api/label-selector';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeDeploymentType } from '../../../../../apiserver/registry/types/deployments';
import { makeReplicaSetType } from '../../../../../apiserver/registry/types/replicasets';
import { ago, cells, fields, now } from './fixtures';

const deployType = makeDeploymentType(now);
const rsType = makeReplicaSetType(now);

const template = (labels: Record<string, string> = { app: 'web' }) => ({ metadata: { labels }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }, { name: 'sidecar', image: 'busybox' }] } });

function deployment(spec: Record<string, unknown> = {}): KObject {
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', creationTimestamp: ago(90_000) }, spec: { selector: { matchLabels: { app: 'web' } }, template: template(), ...spec } };
}

test('Deployment defaults as spec 9.3: replicas 1, RollingUpdate 25%/25%, history 10, deadline 600, template defaults', (t) => {
  const d = deployment();
  deployType.defaults!(d);
  const spec = d.spec as Record<string, any>;
  t.is(spec.replicas, 1);
  t.deepEqual(spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
  t.is(spec.revisionHistoryLimit, 10);
  t.is(spec.progressDeadlineSeconds, 600);
  t.is(spec.template.spec.restartPolicy, 'Always');
  t.is(spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
  // Explicit zeros are kept (pointers upstream); Recreate gets no rollingUpdate.
  const z = deployment({ replicas: 0, revisionHistoryLimit: 0, strategy: { type: 'Recreate' } });
  deployType.defaults!(z);
  t.deepEqual([(z.spec as any).replicas, (z.spec as any).revisionHistoryLimit, (z.spec as any).strategy], [0, 0, { type: 'Recreate' }]);
  t.deepEqual(deployType.validate!(d), []);
});

test('Deployment validation: selector required, non-empty and matching the template; strategy rules with upstream messages', (t) => {
  const noSel = deployment({ selector: undefined });
  deployType.defaults!(noSel);
  t.deepEqual(fields(deployType.validate!(noSel)), ['spec.selector']);
  const empty = deployment({ selector: {} });
  deployType.defaults!(empty);
  t.deepEqual(deployType.validate!(empty).map((c) => c.message), ['Invalid value: {}: empty selector is invalid for deployment']);
  const mismatch = deployment({ selector: { matchLabels: { app: 'other' } } });
  deployType.defaults!(mismatch);
  t.deepEqual(deployType.validate!(mismatch).map((c) => [c.field, c.message.endsWith('`selector` does not match template `labels`')]), [['spec.template.metadata.labels', true]]);
  const zeroZero = deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '0%' } } });
  deployType.defaults!(zeroZero);
  t.deepEqual(deployType.validate!(zeroZero).map((c) => [c.field, c.message]), [['spec.strategy.rollingUpdate.maxUnavailable', 'Invalid value: 0: may not be 0 when `maxSurge` is 0']]);
  const recreate = deployment({ strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } });
  deployType.defaults!(recreate);
  t.deepEqual(deployType.validate!(recreate).map((c) => c.message), ["Forbidden: may not be specified when strategy `type` is 'Recreate'"]);
  const bad = deployment({ strategy: { type: 'Blue', rollingUpdate: {} }, minReadySeconds: 700, replicas: -1 });
  deployType.defaults!(bad);
  t.deepEqual(fields(deployType.validate!(bad)), ['spec.replicas', 'spec.strategy.type', 'spec.progressDeadlineSeconds']);
  const pct = deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '150%', maxSurge: 'x' } } });
  deployType.defaults!(pct);
  t.deepEqual(fields(deployType.validate!(pct)), ['spec.strategy.rollingUpdate.maxSurge', 'spec.strategy.rollingUpdate.maxUnavailable']);
  const always = deployment({ template: { ...template(), spec: { containers: [{ name: 'c', image: 'i' }], restartPolicy: 'Never' } } });
  deployType.defaults!(always);
  t.deepEqual(fields(deployType.validate!(always)), ['spec.template.spec.restartPolicy']);
});

test('Deployment status counters: non-negative and bounded by replicas; collisionCount never decremented; selector immutable', (t) => {
  const d = deployment();
  deployType.defaults!(d);
  d.status = { replicas: 2, updatedReplicas: 3, readyReplicas: 1, availableReplicas: 2, collisionCount: 1 };
  t.deepEqual(fields(deployType.validate!(d, undefined, 'status')), ['status.updatedReplicas', 'status.availableReplicas']);
  const old = structuredClone(d);
  const next = structuredClone(d);
  (next.status as any).collisionCount = 0;
  (next.spec as any).selector = { matchLabels: { app: 'web', tier: 'x' } };
  t.deepEqual(deployType.validateUpdate!(next, old).map((c) => [c.field, c.message.endsWith('field is immutable') || c.message.endsWith('cannot be decremented')]), [
    ['spec.selector', true],
    ['status.collisionCount', true],
  ]);
});

test('Deployment generation: annotation changes count, except through status', (t) => {
  const a = deployment();
  const b = structuredClone(a);
  b.metadata.annotations = { 'kubernetes.io/change-cause': 'x' };
  t.true(deployType.bumpsGeneration!(b, a, ''));
  t.false(deployType.bumpsGeneration!(b, a, 'status'));
  t.false(deployType.bumpsGeneration!(structuredClone(a), a, ''));
});

test('tables: deployment READY/UP-TO-DATE/AVAILABLE, replica set DESIRED/CURRENT/READY, wide containers, images and selector', (t) => {
  const d = deployment({ replicas: 3, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] } });
  d.status = { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 1 };
  t.deepEqual(cells(deployType, d), { Ready: '2/3', 'Up-to-date': 3, Available: 1, Age: '90s', Containers: 'nginx,sidecar', Images: 'nginx:1.27,busybox', Selector: 'app=web,tier in (a,b)' });
  const rs: KObject = { metadata: { name: 'web-1', creationTimestamp: ago(3600_000) }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template() }, status: { replicas: 2, readyReplicas: 1 } };
  t.deepEqual(cells(rsType, rs), { Desired: 3, Current: 2, Ready: 1, Age: '60m', Containers: 'nginx,sidecar', Images: 'nginx:1.27,busybox', Selector: 'app=web' });
  t.deepEqual(rsType.tableColumns!.filter((c) => c.priority === 1).map((c) => c.name), ['Containers', 'Images', 'Selector']);
});

test('ReplicaSet: replicas default 1, selector rules, status bounds, immutable selector, scale declared', (t) => {
  const rs: KObject = { metadata: { name: 'web-1', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, template: template() } };
  rsType.defaults!(rs);
  t.is((rs.spec as any).replicas, 1);
  t.deepEqual(rsType.validate!(rs), []);
  rs.status = { replicas: 1, readyReplicas: 1, availableReplicas: 2, fullyLabeledReplicas: -1 };
  t.deepEqual(fields(rsType.validate!(rs, undefined, 'status')), ['status.fullyLabeledReplicas', 'status.availableReplicas', 'status.availableReplicas']);
  const moved = structuredClone(rs);
  (moved.spec as any).selector = { matchLabels: { app: 'x' } };
  t.deepEqual(fields(rsType.validateUpdate!(moved, rs)), ['spec.selector']);
  t.deepEqual(rsType.scale, { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' });
  t.deepEqual([rsType.shortNames, deployType.shortNames, rsType.categories], [['rs'], ['deploy'], ['all']]);
});

test('labelSelectorString: requirements sorted by key, set values sorted, every operator', (t) => {
  t.is(
    labelSelectorString({
      matchLabels: { z: '1', a: '2' },
      matchExpressions: [
        { key: 'm', operator: 'NotIn', values: ['y', 'x'] },
        { key: 'b', operator: 'Exists' },
        { key: 'c', operator: 'DoesNotExist' },
      ],
    }),
    'a=2,b,!c,m notin (x,y),z=1',
  );
  t.is(labelSelectorString({}), '');
  t.is(labelSelectorString({ matchExpressions: [{ key: 'a', operator: 'Near' }] }), '');
});
