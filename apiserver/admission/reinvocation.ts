import { isDeepStrictEqual } from 'node:util';
import type { KObject } from '../api/types';
import type { AdmissionAttributes } from '../store/write-admission';

/**
 * Reinvocation of the mutating phase (upstream k8s.io/apiserver/pkg/admission reinvocation.go):
 * when a mutating webhook or MutatingAdmissionPolicy changed the object, the chain runs every
 * mutating plugin once more — the built-in ones all again (they are idempotent), webhooks and
 * policies only those with reinvocationPolicy IfNeeded that ran before a later change. Never a
 * third time. A request's context lives beside its attributes (a WeakMap), so the store's
 * AdmissionAttributes need not know about it.
 */
export class ReinvocationContext {
  /** This is the second pass. */
  isReinvoke = false;
  /** A webhook or policy changed the object: the chain should run the mutating plugins again. */
  shouldReinvoke = false;
  private readonly values = new Map<string, unknown>();

  /** A plugin's own state across both passes (upstream's ReinvocationContext.Value/SetValue). */
  value<T>(plugin: string, make: () => T): T {
    if (!this.values.has(plugin)) this.values.set(plugin, make());
    return this.values.get(plugin) as T;
  }
}

const contexts = new WeakMap<AdmissionAttributes, ReinvocationContext>();

/** The request's context; a plugin run outside a chain (a unit test) gets one of its own that no one reinvokes. */
export function reinvocationOf(a: AdmissionAttributes): ReinvocationContext {
  let ctx = contexts.get(a);
  if (!ctx) contexts.set(a, (ctx = new ReinvocationContext()));
  return ctx;
}

/** Starts a fresh context for one admission of a request (the chain calls this). */
export function startReinvocation(a: AdmissionAttributes): ReinvocationContext {
  const ctx = new ReinvocationContext();
  contexts.set(a, ctx);
  return ctx;
}


/**
 * One plugin's reinvocation bookkeeping (upstream's webhookReinvokeContext and
 * policyReinvokeContext, which behave alike): the IfNeeded hooks or policies called so far, those
 * due on the second pass (every IfNeeded one called before a change), and the object as the
 * plugin last left it — if something later changed it, the second pass reinvokes every IfNeeded
 * one this plugin called.
 */
export class ReinvokeTracker {
  private readonly previouslyInvoked = new Set<string>();
  private readonly due = new Set<string>();
  private lastOutput?: KObject | null;

  /** For one request: the tracker kept in its context under the plugin's name. */
  static of(a: AdmissionAttributes, plugin: string): { ctx: ReinvocationContext; tracker: ReinvokeTracker } {
    const ctx = reinvocationOf(a);
    return { ctx, tracker: ctx.value(plugin, () => new ReinvokeTracker()) };
  }

  /** Whether the plugin has anything to do on the second pass (nothing is called there for the first time). */
  idleOnReinvoke(ctx: ReinvocationContext): boolean {
    return ctx.isReinvoke && this.previouslyInvoked.size === 0;
  }

  /** At the start of the plugin's run: on the second pass, a change since the plugin's last run makes every IfNeeded one it called due. */
  begin(ctx: ReinvocationContext, a: AdmissionAttributes): void {
    if (ctx.isReinvoke && this.lastOutput !== undefined && !isDeepStrictEqual(this.lastOutput, a.object ?? null)) this.requireReinvoking();
  }

  /** Whether this one is passed over now: on the second pass, everything not due. */
  notDue(ctx: ReinvocationContext, key: string): boolean {
    return ctx.isReinvoke && !this.due.has(key);
  }

  /** After calling one: a change makes every IfNeeded one called before it due and asks the chain for a second pass; an IfNeeded one is remembered. */
  invoked(ctx: ReinvocationContext, key: string, changed: boolean, ifNeeded: boolean): void {
    if (ctx.isReinvoke) this.due.delete(key);
    if (changed) {
      this.requireReinvoking();
      ctx.shouldReinvoke = true;
    }
    if (ifNeeded) this.previouslyInvoked.add(key);
  }

  /** At the end of the plugin's run (when it called anything): the object as it leaves it. */
  end(a: AdmissionAttributes): void {
    if (this.previouslyInvoked.size > 0) this.lastOutput = a.object ? structuredClone(a.object) : null;
  }

  private requireReinvoking(): void {
    for (const k of this.previouslyInvoked) this.due.add(k);
  }
}
