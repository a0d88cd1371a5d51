import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeControllerRevisionType } from '../../../../../apiserver/registry/types/controllerrevisions';
import { makeDaemonSetType, TEMPLATE_GENERATION_ANNOTATION } from '../../../../../apiserver/registry/types/daemonsets';
import { makeStatefulSetType } from '../../../../../apiserver/registry/types/statefulsets';
import { formatLabelSelector } from '../../../../../apiserver/api/label-selector';
import { scaledValue } from '../../../../../apiserver/registry/types/workload-common';
import { ago, cells, fields, now } from './fixtures';

const sts = makeStatefulSetType(now);
const ds = makeDaemonSetType(now);
const cr = makeControllerRevisionType(now);

const template = (extra: Record<string, unknown> = {}) => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27', volumeMounts: [{ name: 'www', mountPath: '/www' }] }], ...extra },
});

function statefulSet(spec: Record<string, unknown> = {}): KObject {
  return {
    metadata: { name: 'web', namespace: 'shop', creationTimestamp: ago(90_000) },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: template(),
      volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      ...spec,
    },
  };
}

function daemonSet(spec: Record<string, unknown> = {}): KObject {
  return {
    metadata: { name: 'agent', namespace: 'kube', creationTimestamp: ago(30_000) },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'a', image: 'agent:1' }] } }, ...spec },
  };
}

test('StatefulSet defaults as upstream: OrderedReady, RollingUpdate partition 0, Retain/Retain, replicas 1, history 10; claim templates defaulted', (t) => {
  const o = statefulSet();
  sts.defaults!(o);
  const spec = o.spec as Record<string, any>;
  t.is(spec.podManagementPolicy, 'OrderedReady');
  t.deepEqual(spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
  t.deepEqual(spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
  t.is(spec.replicas, 1);
  t.is(spec.revisionHistoryLimit, 10);
  t.is(spec.template.spec.restartPolicy, 'Always');
  t.is(spec.volumeClaimTemplates[0].spec.volumeMode, 'Filesystem');
  t.is(spec.volumeClaimTemplates[0].status.phase, 'Pending');
  t.deepEqual(sts.validate!(o), []);
  // An explicit RollingUpdate without parameters stays without them (upstream fills rollingUpdate only when it defaulted the type).
  const explicit = statefulSet({ updateStrategy: { type: 'RollingUpdate' } });
  sts.defaults!(explicit);
  t.deepEqual((explicit.spec as any).updateStrategy, { type: 'RollingUpdate' });
  const onDelete = statefulSet({ updateStrategy: { type: 'OnDelete' } });
  sts.defaults!(onDelete);
  t.deepEqual((onDelete.spec as any).updateStrategy, { type: 'OnDelete' });
});

test('StatefulSet validation answers with upstream messages', (t) => {
  const bad = statefulSet({ podManagementPolicy: 'Burst', updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } }, replicas: -1, selector: {} });
  sts.defaults!(bad);
  const causes = sts.validate!(bad);
  t.deepEqual(fields(causes), ['spec.podManagementPolicy', 'spec.updateStrategy.rollingUpdate', 'spec.replicas', 'spec.selector']);
  t.is(causes[0].message, `Invalid value: "Burst": must be 'OrderedReady' or 'Parallel'`);
  t.true(causes[1].message.endsWith("only allowed for updateStrategy 'RollingUpdate'"));
  t.true(causes[3].message.endsWith('empty selector is invalid for statefulset'));
  const strategy = statefulSet({ updateStrategy: { type: 'Sometimes' } });
  sts.defaults!(strategy);
  t.true(sts.validate!(strategy)[0].message.endsWith("must be 'RollingUpdate' or 'OnDelete'"));
  const noSelector = statefulSet({ selector: undefined });
  sts.defaults!(noSelector);
  t.deepEqual(sts.validate!(noSelector).map((c) => c.message), ['Required value']);
  const mismatch = statefulSet({ selector: { matchLabels: { app: 'db' } } });
  sts.defaults!(mismatch);
  t.deepEqual(sts.validate!(mismatch).map((c) => [c.field, c.message.endsWith('`selector` does not match template `labels`')]), [['spec.template.metadata.labels', true]]);
  const never = statefulSet({ template: template({ restartPolicy: 'Never', activeDeadlineSeconds: 5 }) });
  sts.defaults!(never);
  t.deepEqual(fields(sts.validate!(never)), ['spec.template.spec.restartPolicy', 'spec.template.spec.activeDeadlineSeconds']);
  t.is(sts.validate!(never)[1].message, 'Forbidden: activeDeadlineSeconds in StatefulSet is not Supported');
  const claim = statefulSet({ volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { resources: { requests: { storage: '1Gi' } } } }] });
  sts.defaults!(claim);
  t.deepEqual(fields(sts.validate!(claim)), ['spec.volumeClaimTemplates[0].spec.accessModes']);
  // A volumeMount naming no volume and no claim template is refused as for pods.
  const noClaim = statefulSet({ volumeClaimTemplates: [] });
  sts.defaults!(noClaim);
  t.deepEqual(fields(sts.validate!(noClaim)), ['spec.template.spec.containers[0].volumeMounts[0].name']);
  const policy = statefulSet({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' }, ordinals: { start: 5 } });
  sts.defaults!(policy);
  t.deepEqual(sts.validate!(policy), []);
});

test('StatefulSet updates may change only replicas, ordinals, template, updateStrategy, retention policy and minReadySeconds', (t) => {
  const old = statefulSet();
  sts.defaults!(old);
  const ok = structuredClone(old) as any;
  ok.spec.replicas = 5;
  ok.spec.template.spec.containers[0].image = 'nginx:1.28';
  ok.spec.updateStrategy = { type: 'OnDelete' };
  ok.spec.minReadySeconds = 10;
  ok.spec.ordinals = { start: 1 };
  ok.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: 'Delete', whenScaled: 'Retain' };
  t.deepEqual(sts.validateUpdate!(ok, old), []);
  for (const change of [(s: any) => (s.selector = { matchLabels: { app: 'web', tier: 'x' } }), (s: any) => (s.serviceName = 'other'), (s: any) => (s.podManagementPolicy = 'Parallel'), (s: any) => s.volumeClaimTemplates.pop()]) {
    const o = structuredClone(old) as any;
    change(o.spec);
    const causes = sts.validateUpdate!(o, old);
    t.deepEqual(fields(causes), ['spec']);
    t.is(
      causes[0].message,
      "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    );
  }
});

test('StatefulSet status writes: counts bounded by replicas, collisionCount never decremented', (t) => {
  const o = statefulSet();
  o.status = { replicas: 2, readyReplicas: 3, availableReplicas: 1, collisionCount: 0 };
  const old = { ...statefulSet(), status: { collisionCount: 1 } };
  const causes = sts.validate!(o, old, 'status');
  t.deepEqual(fields(causes), ['status.readyReplicas', 'status.collisionCount']);
  t.true(causes[0].message.endsWith('cannot be greater than status.replicas'));
  t.true(causes[1].message.endsWith('cannot be decremented'));
});

test('StatefulSet table: Ready as ready/desired, wide containers and images', (t) => {
  const o = statefulSet({ replicas: 3 });
  o.status = { readyReplicas: 2 };
  t.deepEqual(cells(sts, o), { Ready: '2/3', Age: '90s', Containers: 'app', Images: 'nginx:1.27' });
  t.deepEqual([sts.shortNames, sts.categories, sts.hasStatus], [['sts'], ['all'], true]);
});

test('DaemonSet defaults: RollingUpdate maxUnavailable 1 maxSurge 0, history 10, template generation 1', (t) => {
  const o = daemonSet();
  ds.defaults!(o);
  const spec = o.spec as Record<string, any>;
  t.deepEqual(spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  t.is(spec.revisionHistoryLimit, 10);
  t.is(o.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION], '1');
  t.deepEqual(ds.validate!(o), []);
  const onDelete = daemonSet({ updateStrategy: { type: 'OnDelete' } });
  ds.defaults!(onDelete);
  t.deepEqual((onDelete.spec as any).updateStrategy, { type: 'OnDelete' });
});

test('DaemonSet validation: strategy rules and selector with upstream messages', (t) => {
  const both = daemonSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '10%' } } });
  ds.defaults!(both);
  t.deepEqual(ds.validate!(both).map((c) => [c.field, c.message]), [['spec.updateStrategy.rollingUpdate.maxSurge', 'Invalid value: "10%": may not be set when maxUnavailable is non-zero']]);
  const none = daemonSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } });
  ds.defaults!(none);
  t.deepEqual(ds.validate!(none).map((c) => [c.field, c.message]), [['spec.updateStrategy.rollingUpdate.maxUnavailable', 'Required value: cannot be 0 when maxSurge is 0']]);
  const over = daemonSet({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '120%' } } });
  ds.defaults!(over);
  t.true(ds.validate!(over)[0].message.endsWith('must not be greater than 100%'));
  const kind = daemonSet({ updateStrategy: { type: 'Sometimes' } });
  ds.defaults!(kind);
  t.deepEqual(fields(ds.validate!(kind)), ['spec.updateStrategy']);
  t.true(ds.validate!(kind)[0].message.includes('supported values: "RollingUpdate", "OnDelete"'));
  const empty = daemonSet({ selector: {} });
  ds.defaults!(empty);
  t.true(ds.validate!(empty)[0].message.endsWith('empty selector is invalid for daemonset'));
  const deadline = daemonSet({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'a', image: 'x' }], activeDeadlineSeconds: 3 } } });
  ds.defaults!(deadline);
  t.deepEqual(ds.validate!(deadline).map((c) => c.message), ['Forbidden: activeDeadlineSeconds in DaemonSet is not Supported']);
});

test('DaemonSet update: selector immutable; the template generation annotation follows template changes only', (t) => {
  const old = daemonSet();
  ds.defaults!(old);
  const same = structuredClone(old) as any;
  same.spec.minReadySeconds = 5;
  same.metadata.annotations[TEMPLATE_GENERATION_ANNOTATION] = '7';
  t.deepEqual(ds.validateUpdate!(same, old), []);
  t.is(same.metadata.annotations[TEMPLATE_GENERATION_ANNOTATION], '1');
  const changed = structuredClone(old) as any;
  changed.spec.template.spec.containers[0].image = 'agent:2';
  delete changed.metadata.annotations;
  t.deepEqual(ds.validateUpdate!(changed, old), []);
  t.is(changed.metadata.annotations[TEMPLATE_GENERATION_ANNOTATION], '2');
  const selector = structuredClone(old) as any;
  selector.spec.selector = { matchLabels: { app: 'web', v: '2' } };
  t.deepEqual(ds.validateUpdate!(selector, old).map((c) => [c.field, c.message.endsWith('field is immutable')]), [['spec.selector', true]]);
});

test('DaemonSet table as kubectl shows it', (t) => {
  const o = daemonSet({ template: { metadata: { labels: { app: 'web' } }, spec: { nodeSelector: { 'kubernetes.io/os': 'linux' }, containers: [{ name: 'a', image: 'agent:1' }, { name: 'b', image: 'side:2' }] } } });
  o.status = { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 1, numberAvailable: 2 };
  t.deepEqual(cells(ds, o), {
    Desired: 3,
    Current: 3,
    Ready: 2,
    'Up-to-date': 1,
    Available: 2,
    'Node Selector': 'kubernetes.io/os=linux',
    Age: '30s',
    Containers: 'a,b',
    Images: 'agent:1,side:2',
    Selector: 'app=web',
  });
});

test('ControllerRevision: data required and immutable, revision may change; Controller column', (t) => {
  const o: KObject = {
    metadata: { name: 'web-5d4f', namespace: 'shop', creationTimestamp: ago(60_000), ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u', controller: true }] },
    data: { spec: { template: { $patch: 'replace' } } },
    revision: 2,
  };
  t.deepEqual(cr.validate!(o), []);
  t.deepEqual(cells(cr, o), { Controller: 'statefulset.apps/web', Revision: 2, Age: '60s' });
  t.deepEqual(cells(cr, { ...o, metadata: { ...o.metadata, ownerReferences: undefined } }).Controller, '<none>');
  t.deepEqual(cr.validate!({ metadata: { name: 'x' }, revision: -1 }).map((c) => [c.field, c.message]), [
    ['data', 'Required value: data is mandatory'],
    ['revision', 'Invalid value: -1: must be greater than or equal to 0'],
  ]);
  t.deepEqual(cr.validateUpdate!({ ...o, revision: 3 }, o), []);
  t.deepEqual(fields(cr.validateUpdate!({ ...o, data: { spec: {} } }, o)), ['data']);
});

test('label selectors print as kubectl prints them; int-or-percent scales as upstream', (t) => {
  t.is(formatLabelSelector({ matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'c', operator: 'In', values: ['y', 'x'] }, { key: 'd', operator: 'DoesNotExist' }] }), 'a=1,b=2,c in (x,y),!d');
  t.is(formatLabelSelector({}), '<none>');
  t.deepEqual([scaledValue('25%', 10, true), scaledValue('25%', 10, false), scaledValue(3, 10, true), scaledValue(undefined, 10, true), scaledValue('x', 10, true)], [3, 2, 3, 0, undefined]);
});

test('regression: a re-spelling with nulls (what client-go writes for an unset creationTimestamp) is no change of a StatefulSet spec or a DaemonSet template', (t) => {
  const old = statefulSet();
  sts.defaults!(old);
  const respelled = structuredClone(old) as any;
  respelled.spec.volumeClaimTemplates[0].metadata.creationTimestamp = null;
  respelled.spec.volumeClaimTemplates[0].spec.selector = null;
  respelled.spec.template.metadata.creationTimestamp = null;
  sts.defaults!(respelled);
  t.deepEqual(sts.validateUpdate!(respelled, old), []);
  const oldDs = daemonSet();
  ds.defaults!(oldDs);
  const again = structuredClone(oldDs) as any;
  again.spec.template.metadata.creationTimestamp = null;
  again.spec.template.spec.tolerations = [];
  t.deepEqual(ds.validateUpdate!(again, oldDs), []);
  t.is(again.metadata.annotations[TEMPLATE_GENERATION_ANNOTATION], '1');
  // A zero that means something is a change: runAsUser 0 is root, not "unset".
  const root = structuredClone(oldDs) as any;
  root.spec.template.spec.securityContext = { runAsUser: 0 };
  ds.validateUpdate!(root, oldDs);
  t.is(root.metadata.annotations[TEMPLATE_GENERATION_ANNOTATION], '2');
});
