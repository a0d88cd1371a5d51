import test from 'ava';
import type { AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { ServiceAccountAdmission } from '../../../../apiserver/admission/service-account';
import type { KObject } from '../../../../apiserver/api/types';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';

const pods = { group: '', resource: 'pods', namespaced: true } as ResourceType;
const pod = (sa: string, annotations?: Record<string, string>): KObject => ({ metadata: { name: 'p', namespace: 'ns', annotations }, spec: { serviceAccountName: sa, containers: [] } });
const attrs = (o: KObject, op: AdmissionAttributes['operation'] = 'CREATE'): AdmissionAttributes => ({ operation: op, type: pods, namespace: 'ns', name: 'p', subresource: '', object: o, user: { username: 'u', groups: [] }, dryRun: false });

test('existing account passes; missing one is refused with 403', async (t) => {
  const plugin = new ServiceAccountAdmission(async (_ns, name) => (name === 'builder' ? { metadata: { name } } : null), { defaultRetries: 3, retryDelayMs: 0 });
  await t.notThrowsAsync(plugin.validate(attrs(pod('builder'))));
  const err = await t.throwsAsync(plugin.validate(attrs(pod('ghost'))));
  t.is((err as { code?: number }).code, 403);
  t.regex(err!.message, /error looking up service account ns\/ghost: serviceaccount "ghost" not found/);
});

test('the default account is looked up again while the controller creates it', async (t) => {
  let calls = 0;
  const sleeps: number[] = [];
  const plugin = new ServiceAccountAdmission(async () => (++calls >= 3 ? { metadata: { name: 'default' } } : null), { defaultRetries: 10, retryDelayMs: 150, sleep: async (ms) => void sleeps.push(ms) });
  await t.notThrowsAsync(plugin.validate(attrs(pod('default'))));
  t.is(calls, 3);
  t.deepEqual(sleeps, [150, 150]);
  let n = 0;
  const never = new ServiceAccountAdmission(async () => (n++, null), { defaultRetries: 4, retryDelayMs: 0, sleep: async () => undefined });
  await t.throwsAsync(never.validate(attrs(pod('default'))));
  t.is(n, 4);
});

test('mirror pods may not name a service account; updates and other kinds are not checked', async (t) => {
  const plugin = new ServiceAccountAdmission(async () => null, { defaultRetries: 1, retryDelayMs: 0 });
  await t.notThrowsAsync(plugin.validate(attrs(pod('default', { 'svc.io/config.mirror': 'x' }))));
  await t.throwsAsync(plugin.validate(attrs(pod('builder', { 'svc.io/config.mirror': 'x' }))), { message: /mirror pod may not reference service accounts/ });
  await t.notThrowsAsync(plugin.validate(attrs(pod('ghost'), 'UPDATE')));
  await t.notThrowsAsync(plugin.validate({ ...attrs(pod('ghost')), type: { group: '', resource: 'configmaps' } as ResourceType }));
});
