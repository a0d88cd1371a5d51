import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Informer } from '../../common/informer/informer';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { ApiError, isNotFound } from '../api/errors';
import { labelSelectorRequirements } from '../api/label-selector';
import { matches, type Requirement } from '../api/selectors';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { RBAC_GROUP } from '../authz/rbac-policy';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { rbacMaintenanceContext } from './rbac-bootstrap';

const ctx = rbacMaintenanceContext('clusterrole-aggregation-controller');

/**
 * ClusterRole aggregation (A.6), as upstream's clusterrole-aggregation controller: a ClusterRole
 * with aggregationRule.clusterRoleSelectors gets as rules the union of the rules of every other
 * ClusterRole matching one of its selectors (in name order, duplicates dropped); any change to
 * any ClusterRole re-evaluates every aggregating one, so adding a matching role later adds its rules.
 */
export class ClusterRoleAggregationController {
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly log: Logger,
    /** The process's shared informers; default a factory of its own over store and cache. */
    informers?: StoreInformers,
  ) {
    this.informers = informers ?? new StoreInformers(store, cache, { log });
  }

  /** Aggregates until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    // Any ClusterRole event re-evaluates every aggregating role (the informer's cache is what is read).
    const queue = new WorkQueue();
    const informer = this.roles();
    const enqueue = () => this.enqueueAggregators(queue);
    informer.addEventHandler({ onAdd: enqueue, onUpdate: enqueue, onDelete: enqueue }, { signal });
    this.informers.start(signal);
    if (!(await informer.whenSynced(signal))) return;
    await runWorkers(queue, (name) => this.sync(name), signal, { onError: (name, err) => this.log.warn({ err, clusterrole: name }, 'aggregation failed; retrying') });
  }

  /** The rules the named aggregating role should have now; undefined when it does not aggregate. */
  aggregatedRules(name: string): unknown[] | undefined {
    const roles = this.roles().store;
    const role = roles.get(name);
    const selectors = selectorsOf(role);
    if (!role || !selectors) return undefined;
    const out: unknown[] = [];
    const names = roles.listKeys().filter((n) => n !== name).sort();
    for (const n of names) {
      const other = roles.get(n)!;
      const labels = other.metadata.labels ?? {};
      if (!selectors.some((sel) => sel !== null && matches(sel, (k) => labels[k]))) continue;
      for (const rule of Array.isArray(other.rules) ? other.rules : []) {
        if (!out.some((r) => isDeepStrictEqual(r, rule))) out.push(rule);
      }
    }
    return out;
  }

  private roles(): Informer<KObject> {
    return this.informers.informer(this.type());
  }

  private enqueueAggregators(queue: WorkQueue): void {
    for (const role of this.roles().store.list()) if (selectorsOf(role)) queue.add(role.metadata.name!);
  }

  private async sync(name: string): Promise<void> {
    const want = this.aggregatedRules(name);
    if (!want) return;
    const current = this.roles().get(name)!;
    if (isDeepStrictEqual(current.rules ?? [], want)) return;
    try {
      await this.store.update(
        this.type(),
        '',
        name,
        (cur) => {
          if (!cur) throw new ApiError('NotFound', `clusterroles "${name}" not found`);
          return { ...cur, rules: this.aggregatedRules(name) ?? cur.rules };
        },
        ctx,
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  private type(): ResourceType {
    const t = this.registry.lookup(RBAC_GROUP, 'v1', 'clusterroles');
    if (!t) throw new Error(`clusterroles.${RBAC_GROUP} is not registered`);
    return t;
  }
}

/** The role's selectors as requirement lists (null for an invalid selector, which matches nothing); undefined when it does not aggregate. */
function selectorsOf(role: KObject | undefined): (Requirement[] | null)[] | undefined {
  const agg = role?.aggregationRule;
  if (!isObject(agg) || !Array.isArray(agg.clusterRoleSelectors)) return undefined;
  return agg.clusterRoleSelectors.map(labelSelectorRequirements);
}
