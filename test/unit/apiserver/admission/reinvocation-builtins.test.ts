/**
 * The second pass of the mutating phase (reinvocation.ts) runs every built-in mutating plugin
 * again, as upstream's reinvoker does. They must be idempotent: a pod admitted by the chain with a
 * webhook-like plugin that asks for reinvocation ends up exactly as with one pass, apart from that
 * plugin's own change. Real plugins on a pod that exercises each of them.
 */
import test from 'ava';
import { AdmissionChain, type AdmissionAttributes, type AdmissionPlugin } from '../../../../apiserver/admission/admission';
import { DefaultTolerationSeconds } from '../../../../apiserver/admission/default-toleration-seconds';
import { LimitRanger } from '../../../../apiserver/admission/limit-ranger';
import { PriorityAdmission } from '../../../../apiserver/admission/priority';
import { reinvocationOf } from '../../../../apiserver/admission/reinvocation';
import { RuntimeClassAdmission } from '../../../../apiserver/admission/runtime-class';
import { ServiceAccountAdmission } from '../../../../apiserver/admission/service-account';
import type { KObject } from '../../../../apiserver/api/types';
import { podType } from '../../../../apiserver/registry/types/pods';

const limitRange: KObject = {
  metadata: { name: 'limits', namespace: 'ns' },
  spec: { limits: [{ type: 'Container', default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '100m', memory: '64Mi' } }] },
};
const priorityClass: KObject = { metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'PreemptLowerPriority' };
const runtimeClass: KObject = {
  metadata: { name: 'gvisor' },
  handler: 'runsc',
  overhead: { podFixed: { cpu: '250m', memory: '64Mi' } },
  scheduling: { nodeSelector: { sandbox: 'gvisor' }, tolerations: [{ key: 'sandboxed', operator: 'Exists', effect: 'NoSchedule' }] },
};
const account: KObject = { metadata: { name: 'default', namespace: 'ns' }, imagePullSecrets: [{ name: 'registry' }] };

/** The built-in mutating plugins of upstream's default order that act on pods. */
const builtins = (): AdmissionPlugin[] => [
  new LimitRanger(() => Promise.resolve([limitRange])),
  new ServiceAccountAdmission((_ns, name) => Promise.resolve(name === 'default' ? account : null), { defaultRetries: 1, retryDelayMs: 0 }),
  new PriorityAdmission({ get: (n) => Promise.resolve(n === 'high' ? priorityClass : null), list: () => Promise.resolve([priorityClass]) }),
  new DefaultTolerationSeconds(),
  new RuntimeClassAdmission((n) => Promise.resolve(n === 'gvisor' ? runtimeClass : null)),
];

/** Stands for a mutating webhook that changed the object on the first pass: it labels the pod and asks for the second pass. */
const labeller: AdmissionPlugin = {
  name: 'Labeller',
  mutate(a) {
    const ctx = reinvocationOf(a);
    if (!ctx.isReinvoke) {
      a.object!.metadata.labels = { ...a.object!.metadata.labels, hooked: 'yes' };
      ctx.shouldReinvoke = true;
    }
    return Promise.resolve();
  },
};

function podCreate(): AdmissionAttributes {
  const object: KObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns' },
    spec: { priorityClassName: 'high', runtimeClassName: 'gvisor', containers: [{ name: 'c', image: 'i' }] },
  };
  return { operation: 'CREATE', type: podType, namespace: 'ns', name: 'p', subresource: '', object, user: { username: 'u', groups: [] }, dryRun: false };
}

test('a second pass of the built-in mutating plugins leaves a pod as one pass made it', async (t) => {
  const once = podCreate();
  await new AdmissionChain(builtins()).admit(once);
  const twice = podCreate();
  let passes = 0;
  const counter: AdmissionPlugin = { name: 'Counter', mutate: () => (passes++, Promise.resolve()) };
  await new AdmissionChain([...builtins(), counter, labeller]).admit(twice);
  t.is(passes, 2, 'the chain ran the mutating phase twice');
  t.deepEqual(twice.object!.metadata.labels, { hooked: 'yes' });
  delete twice.object!.metadata.labels;
  // The second pass sees the token volume, the defaults, the priority and the tolerations the
  // first added, and must not add them again or refuse them (a random volume name aside).
  const spec = twice.object!.spec as Record<string, unknown>;
  t.is((spec.volumes as unknown[]).length, 1);
  t.deepEqual(withoutVolumeNames(twice.object!), withoutVolumeNames(once.object!));
  // The first pass did what each plugin does: the comparison is not between two empty pods.
  t.is(spec.priority, 1000);
  t.deepEqual(spec.overhead, { cpu: '250m', memory: '64Mi' });
  t.is((spec.tolerations as unknown[]).length, 3);
  t.deepEqual(spec.imagePullSecrets, [{ name: 'registry' }]);
});

/** The pod with the token volume's random suffix taken out (kube-api-access-<5 random>). */
function withoutVolumeNames(pod: KObject): string {
  return JSON.stringify(pod).replace(/kube-api-access-[a-z0-9]{5}/g, 'kube-api-access-xxxxx');
}
