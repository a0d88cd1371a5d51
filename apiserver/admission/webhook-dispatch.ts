import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import { celInput, matchConditionEnv, ProgramCache } from '../cel/admission-env';
import { CelCompileError } from '../cel/program';
import type { AdmissionAttributes } from '../store/write-admission';
import type { AdmissionPlugin } from './admission';
import { namespaceSelectorMatches, objectSelectorMatches, ruleMatches, type NamespaceLabels } from './admission-match';
import { hookGroup, spelled, spelledRequest } from './hook-spelling';
import { ReinvokeTracker } from './reinvocation';
import { hookEndpoint, postReview, type WebhookClientOptions } from './webhook-client';
import { admissionRequest, admissionReview, uidOf, applyHookPatch, callFailure, denial, dryRunUnsupported, HookCallError, parseReviewAnswer, reviewVersionFor, type HookAnswer } from './webhook-review';

/**
 * The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins (upstream
 * k8s.io/apiserver/pkg/admission/plugin/webhook): the configurations come from an informer's
 * cache, sorted by name as upstream; a hook is called when a rule, the namespace and object
 * selectors and every matchCondition match. Mutating hooks run one after another in the mutating
 * phase, their JSON patches applied to the object; validating hooks are called in parallel in the
 * validating phase. Requests for admissionregistration objects are never sent to hooks (upstream
 * exempts them so a broken hook cannot lock the cluster out of repairing it).
 */

type Rec = Record<string, unknown>;

export interface WebhookDispatchDeps {
  /** The current configurations (MutatingWebhookConfigurations or ValidatingWebhookConfigurations): an informer's cache once synced. */
  configurations: () => readonly KObject[] | Promise<readonly KObject[]>;
  namespaceLabels: NamespaceLabels;
  client?: WebhookClientOptions;
  /** A failure ignored by failurePolicy Ignore (upstream logs it). */
  onIgnoredFailure?: (hook: string, err: Error) => void;
}

interface Hook {
  /** Its configuration's name. */
  config: string;
  name: string;
  spec: Rec;
}

const EXEMPT_GROUP = 'admissionregistration.svc.io';
const DRY_RUN_SAFE = new Set(['None', 'NoneOnDryRun']);


class Dispatcher {
  private readonly programs = new ProgramCache(matchConditionEnv);

  constructor(
    private readonly d: WebhookDispatchDeps,
    private readonly mutating: boolean,
  ) {}

  async hooks(): Promise<Hook[]> {
    const configs = [...(await this.d.configurations())].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
    const out: Hook[] = [];
    for (const c of configs) {
      for (const spec of Array.isArray(c.webhooks) ? (c.webhooks as Rec[]) : []) out.push({ config: c.metadata.name ?? '', name: typeof spec.name === 'string' ? spec.name : '', spec });
    }
    return out;
  }

  /** Rules, selectors, then matchConditions; a condition's error follows failurePolicy (Fail rejects, Ignore skips the hook). */
  async matches(h: Hook, a: AdmissionAttributes): Promise<boolean> {
    const rules = Array.isArray(h.spec.rules) ? (h.spec.rules as Rec[]) : [];
    if (!rules.some((r) => ruleMatches(r, a))) return false;
    if (!(await namespaceSelectorMatches(h.spec.namespaceSelector, a, this.d.namespaceLabels))) return false;
    if (!objectSelectorMatches(h.spec.objectSelector, a)) return false;
    const conditions = Array.isArray(h.spec.matchConditions) ? (h.spec.matchConditions as Rec[]) : [];
    if (conditions.length === 0) return true;
    const request = spelledRequest(admissionRequest(a, uidOf(a)), a.type.group, hookGroup(rules, a));
    const vars = celInput({ object: request.object, oldObject: request.oldObject, request }) as Record<string, unknown>;
    let failure: Error | undefined;
    for (const c of conditions) {
      const program = this.programs.get(typeof c.expression === 'string' ? c.expression : '');
      try {
        if (program instanceof CelCompileError) throw program;
        const v = program.evaluate(vars);
        if (v === false) return false;
        if (v !== true) throw new Error(`matchCondition "${String(c.name)}" evaluated to ${typeof v}, not bool`);
      } catch (err) {
        failure ??= new Error(`failed to evaluate match condition "${String(c.name)}": ${(err as Error).message}`);
      }
    }
    if (failure) {
      if (h.spec.failurePolicy === 'Ignore') return this.ignored(h, failure);
      throw callFailure(h.name, failure);
    }
    return true;
  }

  /** The group spelling the hook sees the request in (./hook-spelling.ts). */
  group(h: Hook, a: AdmissionAttributes): string {
    return hookGroup(Array.isArray(h.spec.rules) ? (h.spec.rules as Rec[]) : [], a);
  }

  private ignored(h: Hook, err: Error): false {
    this.d.onIgnoredFailure?.(h.name, err);
    return false;
  }

  /**
   * Calls one hook; undefined when its failure is ignored (failurePolicy Ignore), which leaves
   * upstream's `failed-open.<mutation|validating>.webhook.admission.k8s.io/round_<r>_index_<i>`
   * audit annotation naming the hook (index: the hook's position among those called).
   */
  async call(h: Hook, a: AdmissionAttributes, index: number, round = 0): Promise<HookAnswer | undefined> {
    const group = this.group(h, a);
    if (a.dryRun && !DRY_RUN_SAFE.has(String(h.spec.sideEffects))) throw dryRunUnsupported(h.name);
    const timeout = typeof h.spec.timeoutSeconds === 'number' ? h.spec.timeoutSeconds : 10;
    try {
      const versions = Array.isArray(h.spec.admissionReviewVersions) ? (h.spec.admissionReviewVersions as string[]) : [];
      const version = reviewVersionFor(versions);
      if (!version) throw new HookCallError(`webhook does not accept known AdmissionReview versions ${JSON.stringify(versions)}`);
      const uid = uidOf(a);
      const endpoint = await hookEndpoint((h.spec.clientConfig ?? {}) as Rec, timeout, this.d.client?.services);
      const body = await postReview(endpoint, admissionReview(version, spelledRequest(admissionRequest(a, uid), a.type.group, group)), timeout, this.d.client);
      try {
        return parseReviewAnswer(body, version, uid, this.mutating);
      } catch (err) {
        throw err instanceof HookCallError ? new HookCallError(`received invalid webhook response: ${err.message}`) : err;
      }
    } catch (err) {
      if (!(err instanceof HookCallError)) throw err;
      if (h.spec.failurePolicy === 'Ignore') {
        this.ignored(h, err);
        a.auditAnnotations ??= {};
        a.auditAnnotations[`failed-open.${this.mutating ? 'mutation' : 'validating'}.webhook.admission.k8s.io/round_${round}_index_${index}`] = h.name;
        return undefined;
      }
      throw callFailure(h.name, err);
    }
  }

  /** Warnings and audit annotations of an answer (annotations keyed `<hook name>/<key>`, the first value kept, as upstream). */
  record(h: Hook, a: AdmissionAttributes, answer: HookAnswer): void {
    a.warnings?.push(...answer.warnings);
    for (const [k, v] of Object.entries(answer.auditAnnotations)) {
      a.auditAnnotations ??= {};
      a.auditAnnotations[`${h.name}/${k}`] ??= v;
    }
  }
}

/** The store holds the object it passed to admission: a patched object replaces its contents in place. */
function replaceContents(target: KObject, next: KObject): void {
  for (const k of Object.keys(target)) delete (target as Record<string, unknown>)[k];
  Object.assign(target, next);
}

const exempt = (a: AdmissionAttributes): boolean => a.type.group === EXEMPT_GROUP;

/** MutatingAdmissionWebhook: hooks in order, each patch applied before the next hook; IfNeeded hooks called once more when a later mutation changed the object. */
export class MutatingWebhookPlugin implements AdmissionPlugin {
  readonly name = 'MutatingAdmissionWebhook';
  readonly namesItself = true;
  private readonly dispatch: Dispatcher;

  constructor(deps: WebhookDispatchDeps) {
    this.dispatch = new Dispatcher(deps, true);
  }

  /**
   * Upstream's mutating dispatcher: on the chain's second pass (./reinvocation.ts) only the
   * IfNeeded hooks called before a later change — by a later hook, a mutating policy or a
   * built-in plugin — are called again; a hook is never called there for the first time.
   */
  async mutate(a: AdmissionAttributes): Promise<void> {
    if (exempt(a)) return;
    const { ctx, tracker } = ReinvokeTracker.of(a, this.name);
    if (tracker.idleOnReinvoke(ctx)) return;
    tracker.begin(ctx, a);
    const hooks = await this.dispatch.hooks();
    for (const [index, h] of hooks.entries()) {
      // Keyed by configuration and hook name (upstream: the hook's UID, unique the same way).
      const key = `${h.config}/${h.name}`;
      if (tracker.notDue(ctx, key) || !(await this.dispatch.matches(h, a))) continue;
      const changed = await this.invoke(h, a, index, ctx.isReinvoke ? 1 : 0);
      tracker.invoked(ctx, key, changed, h.spec.reinvocationPolicy === 'IfNeeded');
    }
    tracker.end(a);
  }

  /** Calls one hook and applies its patch; whether the object changed. */
  private async invoke(h: Hook, a: AdmissionAttributes, index: number, round: number): Promise<boolean> {
    const answer = await this.dispatch.call(h, a, index, round);
    if (!answer) return false;
    let changed = false;
    if (!answer.allowed) throw denial(h.name, answer.result);
    if (answer.patch !== undefined && a.object) {
      // The patch is relative to the object as the hook saw it.
      const group = this.dispatch.group(h, a);
      const next = spelled(applyHookPatch(spelled(a.object, a.type.group, group), answer.patch), group, a.type.group);
      // Upstream decodes the patched object, which defaults it (a container a hook adds gets its defaults as any container).
      a.type.defaults?.(next);
      changed = !isDeepStrictEqual(next, a.object);
      replaceContents(a.object, next);
    }
    this.dispatch.record(h, a, answer);
    return changed;
  }
}

/** ValidatingAdmissionWebhook: every matching hook called at once; the first refusal in configuration order is the answer. */
export class ValidatingWebhookPlugin implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionWebhook';
  readonly namesItself = true;
  private readonly dispatch: Dispatcher;

  constructor(deps: WebhookDispatchDeps) {
    this.dispatch = new Dispatcher(deps, false);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (exempt(a)) return;
    const hooks = await this.dispatch.hooks();
    const matched = await Promise.all(hooks.map((h) => this.dispatch.matches(h, a)));
    const calls = hooks.filter((_, i) => matched[i]).map(async (h, index) => {
      const answer = await this.dispatch.call(h, a, index);
      if (!answer) return;
      this.dispatch.record(h, a, answer);
      if (!answer.allowed) throw denial(h.name, answer.result);
    });
    const results = await Promise.allSettled(calls);
    for (const r of results) {
      if (r.status === 'rejected') throw r.reason instanceof ApiError ? r.reason : callFailure('', r.reason as Error);
    }
  }
}
