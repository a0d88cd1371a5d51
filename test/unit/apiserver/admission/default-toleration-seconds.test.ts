import test from 'ava';
import { DefaultTolerationSeconds } from '../../../../apiserver/admission/default-toleration-seconds';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import type { KObject } from '../../../../apiserver/api/types';
import { podType } from '../../../../apiserver/registry/types/pods';

function attrs(tolerations: unknown[] | undefined, operation: AdmissionAttributes['operation'] = 'CREATE'): AdmissionAttributes {
  const object: KObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [], ...(tolerations ? { tolerations } : {}) } };
  return { operation, type: podType, namespace: 'ns', name: 'p', subresource: '', object, user: { username: 'u', groups: [] }, dryRun: false };
}
const tolerationsOf = (a: AdmissionAttributes) => (a.object!.spec as { tolerations?: unknown[] }).tolerations;

test('new pods get 300 s tolerations for not-ready and unreachable', async (t) => {
  const a = attrs(undefined);
  await new DefaultTolerationSeconds().mutate(a);
  t.deepEqual(tolerationsOf(a), [
    { key: 'node.svc.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.svc.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ]);
});

test('existing tolerations for a key, or for every key, are left as they are', async (t) => {
  const own = { key: 'node.svc.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 };
  const a = attrs([own]);
  await new DefaultTolerationSeconds().mutate(a);
  t.deepEqual(tolerationsOf(a), [own, { key: 'node.svc.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]);
  const all = attrs([{ operator: 'Exists' }]);
  await new DefaultTolerationSeconds().mutate(all);
  t.deepEqual(tolerationsOf(all), [{ operator: 'Exists' }]);
  const noSchedule = attrs([{ key: 'node.svc.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }]);
  await new DefaultTolerationSeconds().mutate(noSchedule);
  t.is(tolerationsOf(noSchedule)!.length, 3);
});

test('updates are not touched', async (t) => {
  const a = attrs(undefined, 'UPDATE');
  await new DefaultTolerationSeconds().mutate(a);
  t.is(tolerationsOf(a), undefined);
});
