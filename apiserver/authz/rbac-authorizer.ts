import type { KObject } from '../api/types';
import type { UserInfo } from '../api/user';
import type { ResourceType } from '../registry/resource-type';
import type { Attributes, Authorizer, Decision } from './authorizer';
import type { TypedHandler } from '../store/list-watch';
import { describeSubject, RBAC_GROUP, type Binding, type RbacPolicy, type RoleRef, type Subject } from './rbac-policy';
import { toPolicyRule } from './rbac-rules';
import type { RuleList, RuleLister } from './rule-lister';

type Result = { decision: Decision; reason?: string };

/** How many distinct (user, groups, request) decisions are remembered; oldest go first. */
export const RBAC_DECISION_CACHE_SIZE = 4096;

/**
 * The RBAC mode (A.2, A.6): allows when some binding of the user (or one of its groups or its
 * service account) grants a rule matching the request; otherwise no opinion, so later modes
 * decide. Permissions are purely additive, so RBAC never denies.
 *
 * Decisions are remembered per (username, groups, namespace, verb, API group, resource,
 * sub-resource, name, path) — everything a decision reads — until the policy changes at all (its
 * generation moves; the whole memo is then dropped), so a repeated request (a kubelet's
 * heartbeats, a controller's reads) does not walk the user's bindings again. Upstream's RBAC
 * authorizer walks them on every request; with thousands of bindings naming a user's groups that
 * walk dominated the request (see bench/authz-bench.ts), which is why we differ here. A memoised
 * answer is never staler than the policy: the generation is checked on every lookup.
 */
export class RbacAuthorizer implements Authorizer, RuleLister {
  readonly name = 'RBAC';
  private readonly memo = new Map<string, Result>();
  private memoGeneration = -1;

  constructor(
    private readonly policy: RbacPolicy,
    private readonly memoSize = RBAC_DECISION_CACHE_SIZE,
  ) {}

  /** Allow with the granting binding as reason, or no opinion. */
  authorize(a: Attributes): Promise<Result> {
    return Promise.resolve(this.decide(a));
  }

  /** The decision, synchronously (authorize only wraps it). */
  decide(a: Attributes): Result {
    if (this.memoGeneration !== this.policy.generation) {
      this.memo.clear();
      this.memoGeneration = this.policy.generation;
    }
    const key = memoKey(a);
    const hit = this.memo.get(key);
    if (hit) return hit;
    const result = this.evaluate(a);
    if (this.memo.size >= this.memoSize) {
      const oldest = this.memo.keys().next();
      if (!oldest.done) this.memo.delete(oldest.value);
    }
    this.memo.set(key, result);
    return result;
  }

  /** Decisions currently remembered (tests, diagnostics). */
  get memoized(): number {
    return this.memo.size;
  }

  private evaluate(a: Attributes): Result {
    const src = this.policy.allowedBy(a.user, a.info.isResourceRequest ? a.info.namespace : '', a.info);
    if (!src) return { decision: 'no-opinion' };
    const b = src.binding;
    const where = b.kind === 'RoleBinding' ? ` in namespace "${b.namespace}"` : '';
    const who = b.subjects.map((s) => describeSubject(s, b.namespace)).join(', ');
    return { decision: 'allow', reason: `RBAC: allowed by ${b.kind} "${b.name}"${where} of ${b.roleRef.kind} "${b.roleRef.name}" to ${who}` };
  }

  /** Every rule bound to the user, cluster-wide and in the namespace. */
  rulesFor(user: UserInfo, namespace: string): RuleList {
    return { rules: this.policy.rulesFor(user, namespace), incomplete: false };
  }
}

/**
 * Every attribute a decision reads, unambiguously (JSON, so no name can fake a separator). The
 * namespace only counts for resource requests and the path only for non-resource ones, as in
 * evaluate and ruleAllows.
 */
function memoKey(a: Attributes): string {
  const i = a.info;
  return JSON.stringify(
    i.isResourceRequest
      ? [a.user.username, a.user.groups, 1, i.namespace, i.verb, i.apiGroup, i.resource, i.subresource, i.name]
      : [a.user.username, a.user.groups, 0, i.verb, i.path],
  );
}

/** Keeps an RbacPolicy in step with the four RBAC types (feed it from their informers with typedHandler). */
export function rbacPolicyHandler(policy: RbacPolicy): TypedHandler {
  return {
    upsert(t, o) {
      const name = o.metadata.name ?? '';
      const ns = o.metadata.namespace ?? '';
      switch (kindOf(t)) {
        case 'Role':
          return policy.setRole(ns, name, rulesOf(o));
        case 'ClusterRole':
          return policy.setClusterRole(name, rulesOf(o));
        case 'RoleBinding':
          return policy.setBinding(bindingOf('RoleBinding', o));
        case 'ClusterRoleBinding':
          return policy.setBinding(bindingOf('ClusterRoleBinding', o));
      }
    },
    remove(t, o) {
      const name = o.metadata.name ?? '';
      const ns = o.metadata.namespace ?? '';
      switch (kindOf(t)) {
        case 'Role':
          return policy.deleteRole(ns, name);
        case 'ClusterRole':
          return policy.deleteClusterRole(name);
        case 'RoleBinding':
          return policy.deleteBinding('RoleBinding', ns, name);
        case 'ClusterRoleBinding':
          return policy.deleteBinding('ClusterRoleBinding', '', name);
      }
    },
  };
}

function kindOf(t: ResourceType): 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding' | undefined {
  if (t.group !== RBAC_GROUP) return undefined;
  switch (t.resource) {
    case 'roles':
      return 'Role';
    case 'clusterroles':
      return 'ClusterRole';
    case 'rolebindings':
      return 'RoleBinding';
    case 'clusterrolebindings':
      return 'ClusterRoleBinding';
  }
  return undefined;
}

export function rulesOf(o: KObject): ReturnType<typeof toPolicyRule>[] {
  return Array.isArray(o.rules) ? o.rules.map(toPolicyRule) : [];
}

export function bindingOf(kind: Binding['kind'], o: KObject): Binding {
  const ref = (o.roleRef ?? {}) as Partial<RoleRef>;
  const subjects: Subject[] = Array.isArray(o.subjects)
    ? (o.subjects as Partial<Subject>[]).map((s) => ({ kind: s.kind ?? '', name: s.name ?? '', namespace: s.namespace, apiGroup: s.apiGroup }))
    : [];
  return {
    kind,
    namespace: kind === 'RoleBinding' ? (o.metadata.namespace ?? '') : '',
    name: o.metadata.name ?? '',
    roleRef: { kind: ref.kind ?? '', name: ref.name ?? '', apiGroup: ref.apiGroup },
    subjects,
  };
}

/** The ResourceTypes an RBAC informer follows, looked up from the registry. */
export const RBAC_RESOURCES = ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const;
