import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeIngressClassType } from '../../../../../apiserver/registry/types/ingressclasses';
import { ago, cells, fields, now } from './fixtures';

const type = makeIngressClassType(now);
const ic = (spec: Record<string, unknown>): KObject => ({ metadata: { name: 'nginx', creationTimestamp: ago(60_000) }, spec });

test('ingressclass: a valid class, its parameters scope defaulting to Cluster, and kubectl columns', (t) => {
  const o = ic({ controller: 'example.com/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'lb' } });
  type.defaults!(o);
  t.is((o.spec as { parameters: { scope: string } }).parameters.scope, 'Cluster');
  t.deepEqual(type.validate!(o), []);
  t.deepEqual(cells(type, o), { Controller: 'example.com/ingress-nginx', Parameters: 'IngressParameters.k8s.example.com/lb', Age: '60s' });
  t.deepEqual(cells(type, ic({ controller: 'example.com/x' })), { Controller: 'example.com/x', Parameters: '<none>', Age: '60s' });
  t.false(type.namespaced);
});

test('ingressclass: controller required, domain-prefixed, at most 250 characters and immutable; parameters checked as upstream', (t) => {
  t.deepEqual(fields(type.validate!(ic({}))), ['spec.controller']);
  t.deepEqual(fields(type.validate!(ic({ controller: 'nginx' }))), ['spec.controller']);
  t.deepEqual(type.validate!(ic({ controller: `example.com/${'a'.repeat(250)}` })).map((c) => c.message), ['Too long: may not be more than 250 bytes']);
  const bad = ic({ controller: 'example.com/x', parameters: { apiGroup: 'Bad_Group', scope: 'Namespace' } });
  t.deepEqual(fields(type.validate!(bad)), ['spec.parameters.apiGroup', 'spec.parameters.kind', 'spec.parameters.name', 'spec.parameters.namespace']);
  const cluster = ic({ controller: 'example.com/x', parameters: { kind: 'K', name: 'n', scope: 'Cluster', namespace: 'ns' } });
  t.deepEqual(fields(type.validate!(cluster)), ['spec.parameters.namespace']);
  t.deepEqual(fields(type.validate!(ic({ controller: 'example.com/x', parameters: { kind: 'K', name: 'n', scope: 'Global' } }))), ['spec.parameters.scope']);
  t.deepEqual(type.validateUpdate!(ic({ controller: 'example.com/y' }), ic({ controller: 'example.com/x' })).map((c) => [c.field, c.message]), [['spec.controller', 'Invalid value: "example.com/y": field is immutable']]);
});
