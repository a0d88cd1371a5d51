import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { child, duplicate, index, invalid, notSupported, required } from '../field-errors';
import { matchConditionCompileError } from '../../cel/admission-env';
import { rec, recs, str } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { ageColumn, column, type Now } from '../table';
import { mapList } from '../schema-builders';
import { AR, mutatingWebhookSchema, validatingWebhookSchema } from './admissionregistration-schema';
import {
  FAILURE_POLICIES,
  MATCH_POLICIES,
  oneOfOptional,
  validateClientConfig,
  validateMatchConditions,
  validateReviewVersions,
  validateRule,
  validateWebhookName,
} from './admission-rule-validation';

/**
 * admissionregistration.svc.io/v1 MutatingWebhookConfiguration and ValidatingWebhookConfiguration
 * (cluster-scoped): upstream's v1 defaults (failurePolicy Fail, matchPolicy Equivalent,
 * timeoutSeconds 10, namespaceSelector and objectSelector {}, reinvocationPolicy Never, rule
 * scope *, service port 443) and validation (spec 9.3). The webhooks are called by admission/'s
 * dispatcher (webhook-dispatch.ts).
 */

/** v1 accepts only these; Some and Unknown come from v1beta1 objects upstream still stores. */
const SIDE_EFFECTS: readonly string[] = ['None', 'NoneOnDryRun'];
const REINVOCATION: readonly string[] = ['IfNeeded', 'Never'];

export const mutatingWebhookConfigurationSchema = withMeta(`${AR}.MutatingWebhookConfiguration`, {
  webhooks: [2, mapList(mutatingWebhookSchema, ['name'], 'The webhooks and the operations on resources they handle.'), 'Webhooks'],
});

export const validatingWebhookConfigurationSchema = withMeta(`${AR}.ValidatingWebhookConfiguration`, {
  webhooks: [2, mapList(validatingWebhookSchema, ['name'], 'The webhooks and the operations on resources they handle.'), 'Webhooks'],
});

/** Upstream's SetDefaults_(Mutating|Validating)Webhook, SetDefaults_Rule and SetDefaults_ServiceReference. */
export function defaultWebhook(hook: Record<string, unknown>, mutating: boolean): void {
  hook.failurePolicy ??= 'Fail';
  hook.matchPolicy ??= 'Equivalent';
  hook.namespaceSelector ??= {};
  hook.objectSelector ??= {};
  hook.timeoutSeconds ??= 10;
  if (mutating) hook.reinvocationPolicy ??= 'Never';
  for (const rule of recs(hook.rules)) rule.scope ??= '*';
  const svc = rec(rec(hook.clientConfig)?.service);
  if (svc) svc.port ??= 443;
}

function defaults(mutating: boolean) {
  return (o: KObject): void => {
    for (const hook of recs(o.webhooks)) defaultWebhook(hook, mutating);
  };
}

/** Upstream validateMutatingWebhook / validateValidatingWebhook for one hook (v1 rules: sideEffects and admissionReviewVersions required). */
export function validateWebhook(p: string, hook: Record<string, unknown>, mutating: boolean, compile?: (expr: string) => string | undefined): Cause[] {
  const out: Cause[] = [];
  out.push(...validateWebhookName(child(p, 'name'), str(hook.name) ?? ''));
  recs(hook.rules).forEach((r, j) => out.push(...validateRule(index(child(p, 'rules'), j), r)));
  out.push(...oneOfOptional(child(p, 'failurePolicy'), hook.failurePolicy, FAILURE_POLICIES));
  out.push(...oneOfOptional(child(p, 'matchPolicy'), hook.matchPolicy, MATCH_POLICIES));
  if (mutating) out.push(...oneOfOptional(child(p, 'reinvocationPolicy'), hook.reinvocationPolicy, REINVOCATION));
  const se = hook.sideEffects;
  if (se === undefined || se === null || se === '') out.push(required(child(p, 'sideEffects'), `must specify one of ${SIDE_EFFECTS.join(', ')}`));
  else if (!SIDE_EFFECTS.includes(str(se) ?? '')) out.push(notSupported(child(p, 'sideEffects'), se, SIDE_EFFECTS));
  const t = hook.timeoutSeconds;
  if (typeof t === 'number' && (t < 1 || t > 30)) out.push(invalid(child(p, 'timeoutSeconds'), t, 'the timeout value must be between 1 and 30 seconds'));
  out.push(...validateReviewVersions(child(p, 'admissionReviewVersions'), hook.admissionReviewVersions));
  out.push(...validateClientConfig(child(p, 'clientConfig'), hook.clientConfig));
  out.push(...validateMatchConditions(child(p, 'matchConditions'), hook.matchConditions, compile));
  return out;
}

function validator(mutating: boolean, compile?: (expr: string) => string | undefined) {
  return (o: KObject): Cause[] => {
    const out: Cause[] = [];
    const seen = new Set<string>();
    recs(o.webhooks).forEach((hook, i) => {
      const p = index('webhooks', i);
      const name = str(hook.name) ?? '';
      if (name !== '' && seen.has(name)) out.push(duplicate(child(p, 'name'), name));
      seen.add(name);
      out.push(...validateWebhook(p, hook, mutating, compile));
    });
    return out;
  };
}

function makeType(mutating: boolean, now: Now): ResourceType {
  const kind = mutating ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  return {
    group: 'admissionregistration.svc.io',
    version: 'v1',
    resource: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced: false,
    categories: ['api-extensions'],
    schema: mutating ? mutatingWebhookConfigurationSchema : validatingWebhookConfigurationSchema,
    hasStatus: false,
    specFields: ['webhooks'],
    tableColumns: [column('Webhooks', 'integer', 'The number of webhooks.', (o) => recs(o.webhooks).length), ageColumn(now)],
    defaults: defaults(mutating),
    validate: validator(mutating, matchConditionCompileError),
  };
}

export function makeMutatingWebhookConfigurationType(now: Now = Date.now): ResourceType {
  return makeType(true, now);
}

export function makeValidatingWebhookConfigurationType(now: Now = Date.now): ResourceType {
  return makeType(false, now);
}
