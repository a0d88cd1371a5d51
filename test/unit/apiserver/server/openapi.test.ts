import test from 'ava';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';
import { openApiV2 } from '../../../../apiserver/server/openapi';

test('integer properties carry their Go format (int32, int64), as upstream publishes them', (t) => {
  const doc = openApiV2(makeBuiltinTypes(() => Date.now()), 'test') as { definitions: Record<string, any> };
  const pod = Object.entries(doc.definitions).find(([, d]) => d['x-kubernetes-group-version-kind']?.[0]?.kind === 'Pod')?.[1];
  t.truthy(pod);
  const spec = pod.properties.spec.properties;
  // Each also carries its description (kubectl explain); the type and format are exactly upstream's.
  const shape = ({ description, ...rest }: { description?: unknown }) => (t.is(typeof description, 'string'), rest);
  t.deepEqual(shape(spec.priority), { type: 'integer', format: 'int32' });
  t.deepEqual(shape(spec.terminationGracePeriodSeconds), { type: 'integer', format: 'int64' });
  t.deepEqual(shape(pod.properties.metadata.properties.generation), { type: 'integer', format: 'int64' });
  t.deepEqual(shape(spec.containers.items.properties.ports.items.properties.containerPort), { type: 'integer', format: 'int32' });
});

test('a Deployment\'s strategy is marked retainKeys, so kubectl apply drops rollingUpdate when switching to Recreate', (t) => {
  const doc = openApiV2(makeBuiltinTypes(() => Date.now()), 'test') as { definitions: Record<string, any> };
  const d = Object.entries(doc.definitions).find(([, x]) => x['x-kubernetes-group-version-kind']?.[0]?.kind === 'Deployment')?.[1];
  t.is(d.properties.spec.properties.strategy['x-kubernetes-patch-strategy'], 'retainKeys');
  t.is(d.properties.spec.properties.template['x-kubernetes-patch-strategy'], undefined);
});
