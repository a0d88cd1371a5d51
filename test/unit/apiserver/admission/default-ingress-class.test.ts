import test from 'ava';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { DefaultIngressClass } from '../../../../apiserver/admission/default-ingress-class';
import type { KObject } from '../../../../apiserver/api/types';
import { makeIngressType } from '../../../../apiserver/registry/types/ingresses';
import { makeNetworkPolicyType } from '../../../../apiserver/registry/types/networkpolicies';

const ingressType = makeIngressType();

function ingress(spec: Record<string, unknown>, annotations?: Record<string, string>): KObject {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'i', namespace: 'ns', annotations }, spec: { defaultBackend: { service: { name: 's', port: { number: 80 } } }, ...spec } };
}
function attrs(object: KObject, operation: AdmissionAttributes['operation'] = 'CREATE', subresource = '', type = ingressType): AdmissionAttributes {
  return { operation, type, namespace: 'ns', name: 'i', subresource, object, user: { username: 'u', groups: [] }, dryRun: false };
}
function ic(name: string, created: string, isDefault: string | undefined, key = 'ingressclass.kubernetes.io/is-default-class'): KObject {
  return { metadata: { name, creationTimestamp: created, annotations: isDefault === undefined ? {} : { [key]: isDefault } }, spec: { controller: 'example.com/c' } };
}
const classOf = (a: AdmissionAttributes) => (a.object!.spec as { ingressClassName?: string | null }).ingressClassName;

const cases: Array<{ name: string; classes: KObject[]; spec: Record<string, unknown>; annotations?: Record<string, string>; want: unknown }> = [
  { name: 'the one default class is set', classes: [ic('a', '2025-01-01T00:00:00Z', 'true'), ic('b', '2025-01-02T00:00:00Z', undefined)], spec: {}, want: 'a' },
  { name: 'the svc.io spelling of the annotation counts', classes: [ic('a', '2025-01-01T00:00:00Z', 'true', 'ingressclass.svc.io/is-default-class')], spec: {}, want: 'a' },
  { name: 'of several defaults, the newest (upstream since 1.28)', classes: [ic('old', '2025-01-01T00:00:00Z', 'true'), ic('new', '2025-02-01T00:00:00Z', 'true')], spec: {}, want: 'new' },
  { name: 'equally new defaults: the first by name', classes: [ic('b', '2025-01-01T00:00:00Z', 'true'), ic('a', '2025-01-01T00:00:00Z', 'true')], spec: {}, want: 'a' },
  { name: 'a value other than "true" is not default', classes: [ic('a', '2025-01-01T00:00:00Z', 'True')], spec: {}, want: undefined },
  { name: 'no default class: left unset', classes: [], spec: {}, want: undefined },
  { name: 'an explicit class is kept', classes: [ic('a', '2025-01-01T00:00:00Z', 'true')], spec: { ingressClassName: 'gold' }, want: 'gold' },
  { name: 'the deprecated class annotation counts as a class', classes: [ic('a', '2025-01-01T00:00:00Z', 'true')], spec: {}, annotations: { 'kubernetes.io/ingress.class': 'gold' }, want: undefined },
];

for (const c of cases) {
  test(`DefaultIngressClass: ${c.name}`, async (t) => {
    const a = attrs(ingress(c.spec, c.annotations));
    await new DefaultIngressClass(() => Promise.resolve(c.classes)).mutate(a);
    t.is(classOf(a), c.want as string | undefined);
  });
}

test('DefaultIngressClass: updates, other kinds and sub-resources are not touched, and classes are not even listed', async (t) => {
  let listed = 0;
  const plugin = new DefaultIngressClass(() => {
    listed++;
    return Promise.resolve([ic('a', '2025-01-01T00:00:00Z', 'true')]);
  });
  for (const a of [attrs(ingress({}), 'UPDATE'), attrs(ingress({}), 'CREATE', 'status'), attrs(ingress({}), 'CREATE', '', makeNetworkPolicyType())]) {
    await plugin.mutate(a);
    t.is(classOf(a), undefined);
  }
  t.is(listed, 0);
  const created = attrs(ingress({}));
  await plugin.mutate(created);
  t.is(classOf(created), 'a');
  t.is(listed, 1);
});
