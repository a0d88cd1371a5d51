import test from 'ava';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { PriorityAdmission } from '../../../../apiserver/admission/priority';
import type { KObject } from '../../../../apiserver/api/types';
import { makePriorityClassType } from '../../../../apiserver/registry/types/priorityclasses';
import { podType } from '../../../../apiserver/registry/types/pods';

const pcType = makePriorityClassType();
const klass = (name: string, value: number, extra: Record<string, unknown> = {}): KObject => ({ metadata: { name }, value, preemptionPolicy: 'PreemptLowerPriority', ...extra });

function plugin(classes: KObject[]): PriorityAdmission {
  return new PriorityAdmission({
    get: (name) => Promise.resolve(classes.find((c) => c.metadata.name === name) ?? null),
    list: () => Promise.resolve(classes),
  });
}

/** A pod create as the store hands it over: defaulted (priority 0 and PreemptLowerPriority when no class is named). */
function podCreate(spec: Record<string, unknown>, operation: AdmissionAttributes['operation'] = 'CREATE', oldSpec?: Record<string, unknown>): AdmissionAttributes {
  const s: Record<string, unknown> = { containers: [{ name: 'c', image: 'i' }], ...spec };
  if (!s.priorityClassName) {
    s.priority ??= 0;
    s.preemptionPolicy ??= 'PreemptLowerPriority';
  }
  const object: KObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: s };
  const oldObject = oldSpec ? { ...object, spec: oldSpec } : undefined;
  return { operation, type: podType, namespace: 'ns', name: 'p', subresource: '', object, oldObject, user: { username: 'u', groups: [] }, dryRun: false };
}
const spec = (a: AdmissionAttributes) => a.object!.spec as Record<string, unknown>;

test('a pod naming a class gets its value and preemption policy', async (t) => {
  const a = podCreate({ priorityClassName: 'high' });
  await plugin([klass('high', 1000, { preemptionPolicy: 'Never' })]).mutate(a);
  t.like(spec(a), { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' });
});

test('an unknown class is refused with upstream\'s message', async (t) => {
  const err = await t.throwsAsync(plugin([]).mutate(podCreate({ priorityClassName: 'nope' })));
  t.is(err?.message, 'pods "p" is forbidden: no PriorityClass with name nope was found');
  t.is((err as { code?: number }).code, 403);
});

test('a pod naming no class gets the global default (the lowest of several), or 0', async (t) => {
  const none = podCreate({});
  await plugin([klass('high', 1000)]).mutate(none);
  t.like(spec(none), { priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
  t.is(spec(none).priorityClassName, undefined);
  const a = podCreate({});
  await plugin([klass('high', 1000, { globalDefault: true }), klass('mid', 500, { globalDefault: true, preemptionPolicy: 'Never' })]).mutate(a);
  t.like(spec(a), { priorityClassName: 'mid', priority: 500, preemptionPolicy: 'Never' });
  // Idempotent: a conflict retry admits the same object again.
  await plugin([klass('high', 1000, { globalDefault: true }), klass('mid', 500, { globalDefault: true, preemptionPolicy: 'Never' })]).mutate(a);
  t.like(spec(a), { priorityClassName: 'mid', priority: 500 });
});

test('a priority or policy in the pod that disagrees with the class is refused', async (t) => {
  const classes = [klass('high', 1000)];
  const err = await t.throwsAsync(plugin(classes).mutate(podCreate({ priorityClassName: 'high', priority: 7 })));
  t.is(err?.message, 'pods "p" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name');
  const policy = await t.throwsAsync(plugin(classes).mutate(podCreate({ priorityClassName: 'high', preemptionPolicy: 'Never' })));
  t.is(policy?.message, 'pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name');
  // With no class, only the computed 0 is accepted.
  const noClass = await t.throwsAsync(plugin([]).mutate(podCreate({ priority: 5 })));
  t.regex(noClass.message, /the integer value of priority \(5\) must not be provided/);
  const same = podCreate({ priorityClassName: 'high', priority: 1000 });
  await plugin(classes).mutate(same);
  t.is(spec(same).priority, 1000);
});

test('an update keeps the priority given at creation; other resources and sub-resources are not touched', async (t) => {
  const u = podCreate({ priorityClassName: 'high' }, 'UPDATE', { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'PreemptLowerPriority' });
  await plugin([]).mutate(u);
  t.like(spec(u), { priority: 1000, preemptionPolicy: 'PreemptLowerPriority' });
  const status = { ...podCreate({ priorityClassName: 'nope' }), subresource: 'status' };
  await t.notThrowsAsync(plugin([]).mutate(status));
});

test('only one PriorityClass may be the global default', async (t) => {
  const existing = [klass('first', 10, { globalDefault: true })];
  const attrs = (op: AdmissionAttributes['operation'], object: KObject): AdmissionAttributes => ({ operation: op, type: pcType, namespace: '', name: object.metadata.name!, subresource: '', object, user: { username: 'u', groups: [] }, dryRun: false });
  const err = await t.throwsAsync(plugin(existing).validate(attrs('CREATE', klass('second', 20, { globalDefault: true }))));
  t.is(err?.message, 'priorityclasses.scheduling.svc.io "second" is forbidden: PriorityClass first is already marked as default. Only one default can exist');
  await t.throwsAsync(plugin(existing).validate(attrs('UPDATE', klass('other', 20, { globalDefault: true }))));
  await t.notThrowsAsync(plugin(existing).validate(attrs('UPDATE', klass('first', 10, { globalDefault: true, description: 'x' }))));
  await t.notThrowsAsync(plugin(existing).validate(attrs('CREATE', klass('third', 30))));
  await t.notThrowsAsync(plugin([]).validate(attrs('CREATE', klass('only', 30, { globalDefault: true }))));
});
