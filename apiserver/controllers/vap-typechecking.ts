import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { canonicalGroup } from '../api/group-names';
import { isConflict, isNotFound } from '../api/errors';
import type { Schema } from '../api/schema';
import type { KObject } from '../api/types';
import { typeCheckExpression } from '../cel/type-check';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';
import type { WatchCache } from '../store/watch-cache';

const ctx = { ...controllerContext('validatingadmissionpolicy-status-controller'), subresource: 'status' };

/** Upstream's maxTypesToCheck: at most this many kinds are checked per policy. */
export const MAX_TYPES_TO_CHECK = 10;

type Rec = Record<string, unknown>;
const recs = (v: unknown): Rec[] => (Array.isArray(v) ? v.filter((x): x is Rec => typeof x === 'object' && x !== null) : []);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** A kind an expression is checked against: its printed GroupVersionKind (Go's `group/version, Kind=K`) and schema. */
interface CheckedType {
  gvk: string;
  schema: Schema;
}

/**
 * Upstream's typesToCheck: the kinds of matchConstraints.resourceRules (groups × versions ×
 * resources, sorted; a rule with a wildcard group or version is skipped, as are wildcard and
 * sub-resources), at most MAX_TYPES_TO_CHECK, sorted by group, version and kind.
 */
export function typesToCheck(policy: KObject, lookup: (group: string, version: string, resource: string) => ResourceType | undefined): CheckedType[] {
  const found = new Map<string, CheckedType & { key: [string, string, string] }>();
  const rules = recs((policy.spec as Rec | undefined)?.matchConstraints ? ((policy.spec as Rec).matchConstraints as Rec).resourceRules : []);
  for (const rule of rules) {
    const groups = strs(rule.apiGroups);
    const versions = strs(rule.apiVersions);
    if (groups.some((g) => g.includes('*')) || versions.some((v) => v.includes('*'))) continue;
    const resources = strs(rule.resources).filter((r) => !/[*/]/.test(r));
    let count = 0;
    for (const g of [...groups].sort()) {
      for (const v of [...versions].sort()) {
        for (const r of [...resources].sort()) {
          const t = lookup(canonicalGroup(g), v, r);
          if (!t) continue;
          const gvk = `${g}/${v}, Kind=${t.kind}`;
          found.set(gvk, { gvk, schema: t.schema, key: [g, v, t.kind] });
          if (++count === MAX_TYPES_TO_CHECK) return sorted(found);
        }
      }
    }
  }
  return sorted(found);
}

function sorted(found: Map<string, CheckedType & { key: [string, string, string] }>): CheckedType[] {
  const cmp = (a: [string, string, string], b: [string, string, string]) => (a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] !== b[1] ? (a[1] < b[1] ? -1 : 1) : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);
  return [...found.values()].sort((a, b) => cmp(a.key, b.key)).map(({ gvk, schema }) => ({ gvk, schema }));
}

/** Upstream's TypeChecker.Check: one warning per validation expression and messageExpression with type errors for some kind. */
export function expressionWarnings(policy: KObject, types: readonly CheckedType[], params: Schema | undefined): Array<{ fieldRef: string; warning: string }> {
  const out: Array<{ fieldRef: string; warning: string }> = [];
  const check = (source: string): string =>
    types
      .map((t) => {
        const issues = typeCheckExpression(source, { object: t.schema, oldObject: t.schema, params });
        return issues ? `${t.gvk}: ${issues}\n` : '';
      })
      .filter((m) => m !== '')
      .join('\n');
  recs((policy.spec as Rec | undefined)?.validations).forEach((v, i) => {
    const fields: Array<['expression' | 'messageExpression', unknown]> = [['expression', v.expression], ['messageExpression', v.messageExpression]];
    for (const [field, source] of fields) {
      if (typeof source !== 'string' || source === '') continue;
      const warning = check(source);
      if (warning) out.push({ fieldRef: `spec.validations[${i}].${field}`, warning });
    }
  });
  return out;
}

class Stale extends Error {}

export interface TypeCheckingOptions {
  log: Logger;
  informers?: StoreInformers;
}

/**
 * Upstream's ValidatingAdmissionPolicy status controller: each policy whose metadata.generation
 * is not yet its status.observedGeneration is type-checked against the schemas of the kinds it
 * matches (the registry's, the same schemas OpenAPI publishes) and its status written:
 * typeChecking.expressionWarnings and observedGeneration. Bounded work: only changed generations,
 * at most MAX_TYPES_TO_CHECK kinds a policy.
 */
export class ValidatingAdmissionPolicyStatusController {
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: TypeCheckingOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  private policyType(): ResourceType {
    const t = this.registry.lookup('admissionregistration.svc.io', 'v1', 'validatingadmissionpolicies');
    if (!t) throw new Error('validatingadmissionpolicies type not registered');
    return t;
  }

  async run(signal: AbortSignal): Promise<void> {
    const policies = this.informers.informer(this.policyType());
    const queue = new WorkQueue();
    policies.addEventHandler({ onAdd: (p) => queue.add(p.metadata.name!), onUpdate: (_old, p) => queue.add(p.metadata.name!) }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, policies))) return;
    await runWorkers(
      queue,
      async (name) => {
        const p = policies.get(name);
        if (p && !this.upToDate(p)) await this.sync(p);
      },
      signal,
      { onError: (name, err) => this.opts.log.warn({ err, policy: name }, 'type checking a ValidatingAdmissionPolicy failed; retrying') },
    );
  }

  private upToDate(p: KObject): boolean {
    return (p.status as Rec | undefined)?.observedGeneration === (p.metadata.generation ?? 0);
  }

  /** Type-checks the policy as read and writes its status, at that generation (a newer one is checked on its own event). */
  async sync(p: KObject): Promise<void> {
    const generation = p.metadata.generation ?? 0;
    const spec = (p.spec ?? {}) as Rec;
    const pk = spec.paramKind as Rec | undefined;
    const paramType = typeof pk?.apiVersion === 'string' && typeof pk.kind === 'string' ? this.paramType(pk.apiVersion, pk.kind) : undefined;
    const warnings = expressionWarnings(p, typesToCheck(p, (g, v, r) => this.registry.lookup(g, v, r)), paramType?.schema);
    try {
      await this.store.update(
        this.policyType(),
        '',
        p.metadata.name!,
        (cur) => {
          // Gone, or changed since it was read: its own event brings the newer generation.
          if (!cur || cur.metadata.generation !== generation) throw new Stale();
          const typeChecking = warnings.length ? { expressionWarnings: warnings } : {};
          return { ...cur, status: { ...(cur.status as Rec | undefined), observedGeneration: generation, typeChecking } };
        },
        ctx,
      );
    } catch (err) {
      if (err instanceof Stale || isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }

  private paramType(apiVersion: string, kind: string): ResourceType | undefined {
    const slash = apiVersion.indexOf('/');
    return slash < 0 ? this.registry.byKind('', apiVersion, kind) : this.registry.byKind(canonicalGroup(apiVersion.slice(0, slash)), apiVersion.slice(slash + 1), kind);
  }
}
