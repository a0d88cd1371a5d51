import test from 'ava';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { RuntimeClassAdmission } from '../../../../apiserver/admission/runtime-class';
import type { KObject } from '../../../../apiserver/api/types';
import { podType } from '../../../../apiserver/registry/types/pods';

const gvisor: KObject = {
  metadata: { name: 'gvisor' },
  handler: 'runsc',
  overhead: { podFixed: { cpu: '0.25', memory: '64Mi' } },
  scheduling: { nodeSelector: { sandbox: 'gvisor' }, tolerations: [{ key: 'sandboxed', operator: 'Exists', effect: 'NoSchedule' }] },
};
const plain: KObject = { metadata: { name: 'plain' }, handler: 'runc' };
const plugin = () => new RuntimeClassAdmission((name) => Promise.resolve([gvisor, plain].find((c) => c.metadata.name === name) ?? null));

function create(spec: Record<string, unknown>, operation: AdmissionAttributes['operation'] = 'CREATE'): AdmissionAttributes {
  const object: KObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } };
  return { operation, type: podType, namespace: 'ns', name: 'p', subresource: '', object, user: { username: 'u', groups: [] }, dryRun: false };
}
const spec = (a: AdmissionAttributes) => a.object!.spec as Record<string, unknown>;

async function admit(a: AdmissionAttributes): Promise<void> {
  const p = plugin();
  await p.mutate(a);
  await p.validate(a);
}

test('the class\'s overhead, node selector and tolerations are added to the pod', async (t) => {
  const a = create({ runtimeClassName: 'gvisor', nodeSelector: { disk: 'ssd' }, tolerations: [{ key: 'other', operator: 'Exists' }] });
  await admit(a);
  t.deepEqual(spec(a).overhead, { cpu: '250m', memory: '64Mi' });
  t.deepEqual(spec(a).nodeSelector, { disk: 'ssd', sandbox: 'gvisor' });
  t.deepEqual(spec(a).tolerations, [{ key: 'other', operator: 'Exists' }, { key: 'sandboxed', operator: 'Exists', effect: 'NoSchedule' }]);
  // Idempotent (a conflict retry admits again): nothing is added twice.
  await admit(a);
  t.is((spec(a).tolerations as unknown[]).length, 2);
});

test('an unknown class is refused with upstream\'s message', async (t) => {
  const err = await t.throwsAsync(admit(create({ runtimeClassName: 'kata' })));
  t.is(err?.message, 'pods "p" is forbidden: pod rejected: RuntimeClass "kata" not found');
  t.is((err as { code?: number }).code, 403);
});

test('a pod setting another overhead, or one its class does not define, is refused; an equal one is accepted', async (t) => {
  const other = await t.throwsAsync(admit(create({ runtimeClassName: 'gvisor', overhead: { cpu: '1' } })));
  t.is(other?.message, "pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
  const none = await t.throwsAsync(admit(create({ runtimeClassName: 'plain', overhead: { cpu: '1' } })));
  t.is(none?.message, 'pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  const noClass = await t.throwsAsync(admit(create({ overhead: { cpu: '1' } })));
  t.regex(noClass.message, /Pod Overhead set without corresponding RuntimeClass/);
  await t.notThrowsAsync(admit(create({ runtimeClassName: 'gvisor', overhead: { cpu: '250m', memory: '64Mi' } })));
});

test('a node selector key with another value is a conflict', async (t) => {
  const err = await t.throwsAsync(admit(create({ runtimeClassName: 'gvisor', nodeSelector: { sandbox: 'kata' } })));
  t.is(err?.message, 'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = kata');
});

test('pods without a class, updates and sub-resources are not touched', async (t) => {
  const a = create({});
  await admit(a);
  t.is(spec(a).overhead, undefined);
  const update = create({ runtimeClassName: 'kata' }, 'UPDATE');
  await t.notThrowsAsync(admit(update));
  await t.notThrowsAsync(admit({ ...create({ runtimeClassName: 'kata' }), subresource: 'status' }));
});
