import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { isNotFound, isConflict, isAlreadyExists } from '../api/errors';
import type { KObject } from '../api/types';
import { uncoveredRules } from '../authz/rbac-covers';
import {
  AUTOUPDATE_ANNOTATION,
  bindingObject,
  clusterRoleObject,
  defaultBindings,
  defaultClusterRoles,
  defaultRoles,
  roleObject,
} from '../authz/rbac-defaults';
import { RBAC_GROUP } from '../authz/rbac-policy';
import { rulesOf } from '../authz/rbac-authorizer';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore, WriteContext } from '../store/object-store';

/**
 * The identity of in-process RBAC maintenance (bootstrap and aggregation): upstream's loopback
 * client, system:apiserver in system:masters, so the escalation check does not apply (A.6:
 * "initial bootstrap uses credentials in group system:masters").
 */
export function rbacMaintenanceContext(fieldManager: string): WriteContext {
  return { user: { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] }, dryRun: false, fieldManager, subresource: '' };
}

const ctx = rbacMaintenanceContext('rbac-bootstrap');

export interface ReconcileCounts {
  created: number;
  updated: number;
  skipped: number;
}

/**
 * Default roles and bindings (A.6), created when missing and reconciled at every start as
 * upstream's storage post-start hook does: missing rules, aggregation selectors, labels,
 * annotations and subjects are added back (extra ones kept); a binding whose roleRef changed is
 * recreated; objects annotated rbac.authorization.svc.io/autoupdate=false are left alone.
 */
export class RbacBootstrap {
  private done = false;

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
    private readonly log: Logger,
  ) {}

  /** True once a reconcile pass has completed (readyz poststarthook/rbac/bootstrap-roles). */
  isDone(): boolean {
    return this.done;
  }

  /** Reconciles, retrying with backoff until it succeeds or the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    for (let delay = 200; !signal.aborted; delay = Math.min(delay * 2, 5000)) {
      try {
        const counts = await this.reconcile();
        this.log.info(counts, 'default RBAC policy reconciled');
        return;
      } catch (err) {
        this.log.warn({ err }, 'reconciling the default RBAC policy failed; retrying');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** One pass over every default object. */
  async reconcile(): Promise<ReconcileCounts> {
    const counts: ReconcileCounts = { created: 0, updated: 0, skipped: 0 };
    const add = (r: 'created' | 'updated' | 'skipped' | 'unchanged') => {
      if (r !== 'unchanged') counts[r]++;
    };
    for (const r of defaultClusterRoles()) add(await this.ensure(this.type('clusterroles'), '', clusterRoleObject(r), reconcileRole));
    for (const r of defaultRoles()) add(await this.ensure(this.type('roles'), r.namespace, roleObject(r), reconcileRole));
    for (const b of defaultBindings()) {
      const t = this.type(b.namespace ? 'rolebindings' : 'clusterrolebindings');
      add(await this.ensure(t, b.namespace ?? '', bindingObject(b), reconcileBinding));
    }
    this.done = true;
    return counts;
  }

  private type(resource: string): ResourceType {
    const t = this.registry.lookup(RBAC_GROUP, 'v1', resource);
    if (!t) throw new Error(`${resource}.${RBAC_GROUP} is not registered`);
    return t;
  }

  private async ensure(
    t: ResourceType,
    ns: string,
    expected: KObject,
    reconcile: (existing: KObject, expected: KObject) => KObject | 'recreate' | null,
  ): Promise<'created' | 'updated' | 'skipped' | 'unchanged'> {
    const name = expected.metadata.name!;
    let existing: KObject | null = null;
    try {
      existing = await this.store.get(t, ns, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!existing) {
      await this.createIgnoringExists(t, ns, expected);
      return 'created';
    }
    if (existing.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false') return 'skipped';
    const next = reconcile(existing, expected);
    if (next === null) return 'unchanged';
    if (next === 'recreate') {
      await this.store.delete(t, ns, name, {}, ctx);
      await this.createIgnoringExists(t, ns, expected);
      return 'updated';
    }
    await this.store.update(t, ns, name, () => next, ctx);
    return 'updated';
  }

  private async createIgnoringExists(t: ResourceType, ns: string, obj: KObject): Promise<void> {
    try {
      await this.store.create(t, ns, obj, ctx);
    } catch (err) {
      if (!(isConflict(err) || isAlreadyExists(err))) throw err;
    }
  }
}

function mergedMeta(existing: KObject, expected: KObject): KObject['metadata'] {
  return {
    ...existing.metadata,
    labels: { ...expected.metadata.labels, ...existing.metadata.labels },
    annotations: { ...expected.metadata.annotations, ...existing.metadata.annotations },
  };
}

/** The reconciled role, or null when nothing is missing (upstream computeReconciledRole without removing extras). */
export function reconcileRole(existing: KObject, expected: KObject): KObject | null {
  const next: KObject = { ...existing, metadata: mergedMeta(existing, expected) };
  const have = rulesOf(existing);
  const want = rulesOf(expected);
  const missing = want.filter((r) => uncoveredRules(have, [r]).length > 0);
  if (missing.length > 0) next.rules = [...(Array.isArray(existing.rules) ? (existing.rules as unknown[]) : []), ...missing];
  const wantAgg = expected.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined;
  if (wantAgg) {
    const haveAgg = (existing.aggregationRule ?? {}) as { clusterRoleSelectors?: unknown[] };
    const haveSel = haveAgg.clusterRoleSelectors ?? [];
    const add = (wantAgg.clusterRoleSelectors ?? []).filter((s) => !haveSel.some((h) => isDeepStrictEqual(h, s)));
    if (add.length > 0 || !existing.aggregationRule) next.aggregationRule = { ...haveAgg, clusterRoleSelectors: [...haveSel, ...add] };
  }
  return isDeepStrictEqual(next, existing) ? null : next;
}

/** The reconciled binding, 'recreate' when its roleRef differs, or null when nothing is missing. */
export function reconcileBinding(existing: KObject, expected: KObject): KObject | 'recreate' | null {
  const refA = existing.roleRef as Record<string, unknown> | undefined;
  const refB = expected.roleRef as Record<string, unknown>;
  if (!refA || refA.kind !== refB.kind || refA.name !== refB.name) return 'recreate';
  const have = Array.isArray(existing.subjects) ? (existing.subjects as Record<string, unknown>[]) : [];
  const want = expected.subjects as Record<string, unknown>[];
  const same = (a: Record<string, unknown>, b: Record<string, unknown>) => a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');
  const add = want.filter((w) => !have.some((h) => same(h, w)));
  const next: KObject = { ...existing, metadata: mergedMeta(existing, expected) };
  if (add.length > 0) next.subjects = [...have, ...add];
  return isDeepStrictEqual(next, existing) ? null : next;
}
