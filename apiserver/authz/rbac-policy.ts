import type { UserInfo } from '../api/user';
import { ruleAllows, type PolicyRule, type RuleRequest } from './rbac-rules';

export const RBAC_GROUP = 'rbac.authorization.svc.io';

export interface RoleRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

/** A RoleBinding (namespace set) or ClusterRoleBinding (namespace ''). */
export interface Binding {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  namespace: string;
  name: string;
  roleRef: RoleRef;
  subjects: readonly Subject[];
}

/** One rule reached for a user, with the binding and role it came from (for reasons and rules reviews). */
export interface RuleSource {
  binding: Binding;
  rule: PolicyRule;
}

/**
 * The in-memory RBAC state (A.6): roles by namespace, cluster roles, and bindings indexed by
 * subject so that a decision looks only at the bindings naming the user or one of its groups —
 * with thousands of bindings a request still touches a handful. Filled by RbacInformer from the
 * watch cache; read by the RBAC authorizer, the escalation check and SelfSubjectRulesReview.
 */
export class RbacPolicy {
  private readonly roles = new Map<string, Map<string, readonly PolicyRule[]>>();
  private readonly clusterRoles = new Map<string, readonly PolicyRule[]>();
  private readonly bindings = new Map<string, Binding>();
  /** subject key → ClusterRoleBindings naming it. */
  private readonly clusterIndex = new Map<string, Set<Binding>>();
  /** namespace → subject key → RoleBindings naming it. */
  private readonly namespaceIndex = new Map<string, Map<string, Set<Binding>>>();
  private gen = 0;

  /** Bumped by every change; a decision remembered at one generation is valid until it moves. */
  get generation(): number {
    return this.gen;
  }

  /** Sets (or replaces) a Role's rules. */
  setRole(namespace: string, name: string, rules: readonly PolicyRule[]): void {
    this.gen++;
    let m = this.roles.get(namespace);
    if (!m) this.roles.set(namespace, (m = new Map<string, readonly PolicyRule[]>()));
    m.set(name, rules);
  }

  deleteRole(namespace: string, name: string): void {
    this.gen++;
    const m = this.roles.get(namespace);
    m?.delete(name);
    if (m?.size === 0) this.roles.delete(namespace);
  }

  /** Sets (or replaces) a ClusterRole's rules. */
  setClusterRole(name: string, rules: readonly PolicyRule[]): void {
    this.gen++;
    this.clusterRoles.set(name, rules);
  }

  deleteClusterRole(name: string): void {
    this.gen++;
    this.clusterRoles.delete(name);
  }

  /** Adds or replaces a binding, re-indexing its subjects. */
  setBinding(b: Binding): void {
    this.gen++;
    this.deleteBinding(b.kind, b.namespace, b.name);
    this.bindings.set(bindingKey(b.kind, b.namespace, b.name), b);
    const index = this.indexFor(b, true)!;
    for (const s of b.subjects) {
      const k = subjectKey(s, b.namespace);
      if (!k) continue;
      let set = index.get(k);
      if (!set) index.set(k, (set = new Set()));
      set.add(b);
    }
  }

  deleteBinding(kind: Binding['kind'], namespace: string, name: string): void {
    this.gen++;
    const key = bindingKey(kind, namespace, name);
    const b = this.bindings.get(key);
    if (!b) return;
    this.bindings.delete(key);
    const index = this.indexFor(b, false);
    if (!index) return;
    for (const s of b.subjects) {
      const k = subjectKey(s, b.namespace);
      const set = k ? index.get(k) : undefined;
      if (!set) continue;
      set.delete(b);
      if (set.size === 0) index.delete(k!);
    }
    if (b.kind === 'RoleBinding' && index.size === 0) this.namespaceIndex.delete(b.namespace);
  }

  /** Forgets every object of one kind (before a relist). */
  clear(kind: 'Role' | 'ClusterRole' | Binding['kind']): void {
    this.gen++;
    if (kind === 'Role') this.roles.clear();
    else if (kind === 'ClusterRole') this.clusterRoles.clear();
    else for (const b of [...this.bindings.values()]) if (b.kind === kind) this.deleteBinding(b.kind, b.namespace, b.name);
  }

  /** The rules a role reference points at from a namespace (a RoleBinding's Role is in its own namespace); undefined when absent. */
  roleRules(ref: RoleRef, namespace: string): readonly PolicyRule[] | undefined {
    if (ref.kind === 'ClusterRole') return this.clusterRoles.get(ref.name);
    if (ref.kind === 'Role') return this.roles.get(namespace)?.get(ref.name);
    return undefined;
  }

  /**
   * Calls visit for every rule the user holds in the namespace ('' = cluster-wide only): first
   * through ClusterRoleBindings, then through the namespace's RoleBindings. visit returns true to stop.
   */
  visitRules(user: UserInfo, namespace: string, visit: (s: RuleSource) => boolean): void {
    const keys = userKeys(user);
    const seen = keys.length > 1 ? new Set<Binding>() : undefined;
    const walk = (index: Map<string, Set<Binding>> | undefined, ns: string): boolean => {
      if (!index) return false;
      for (const k of keys) {
        const set = index.get(k);
        if (!set) continue;
        for (const b of set) {
          if (seen) {
            if (seen.has(b)) continue;
            seen.add(b);
          }
          const rules = this.roleRules(b.roleRef, ns);
          if (!rules) continue;
          for (const rule of rules) if (visit({ binding: b, rule })) return true;
        }
      }
      return false;
    };
    if (walk(this.clusterIndex, '')) return;
    if (namespace) walk(this.namespaceIndex.get(namespace), namespace);
  }

  /** The first binding whose rules grant the request, or undefined. */
  allowedBy(user: UserInfo, namespace: string, req: RuleRequest): RuleSource | undefined {
    let found: RuleSource | undefined;
    this.visitRules(user, namespace, (s) => {
      if (ruleAllows(req, s.rule)) found = s;
      return found !== undefined;
    });
    return found;
  }

  /** Every rule the user holds in the namespace (cluster-wide ones included). */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[] {
    const out: PolicyRule[] = [];
    this.visitRules(user, namespace, (s) => {
      out.push(s.rule);
      return false;
    });
    return out;
  }

  /** True when the object is known (readiness checks: the defaults have reached the index). */
  has(kind: 'Role' | 'ClusterRole' | Binding['kind'], namespace: string, name: string): boolean {
    if (kind === 'Role') return this.roles.get(namespace)?.has(name) ?? false;
    if (kind === 'ClusterRole') return this.clusterRoles.has(name);
    return this.bindings.has(bindingKey(kind, kind === 'ClusterRoleBinding' ? '' : namespace, name));
  }

  /** Counts, for diagnostics and benchmarks. */
  size(): { roles: number; clusterRoles: number; bindings: number } {
    let roles = 0;
    for (const m of this.roles.values()) roles += m.size;
    return { roles, clusterRoles: this.clusterRoles.size, bindings: this.bindings.size };
  }

  private indexFor(b: Binding, create: boolean): Map<string, Set<Binding>> | undefined {
    if (b.kind === 'ClusterRoleBinding') return this.clusterIndex;
    let m = this.namespaceIndex.get(b.namespace);
    if (!m && create) this.namespaceIndex.set(b.namespace, (m = new Map<string, Set<Binding>>()));
    return m;
  }
}

function bindingKey(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/**
 * The index key a subject matches: users and service accounts by the username they authenticate
 * as (upstream appliesToUser; a ServiceAccount subject without namespace means the binding's own),
 * groups by group name. Unknown kinds match nobody.
 */
export function subjectKey(s: Subject, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User':
      return `u:${s.name}`;
    case 'Group':
      return `g:${s.name}`;
    case 'ServiceAccount':
      return `u:system:serviceaccount:${s.namespace || bindingNamespace}:${s.name}`;
  }
  return undefined;
}

function userKeys(user: UserInfo): string[] {
  const keys = [`u:${user.username}`];
  for (const g of user.groups) keys.push(`g:${g}`);
  return keys;
}

/** Short rendering of a subject for reasons: User "x", Group "y", ServiceAccount "ns/name". */
export function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `ServiceAccount "${s.namespace || bindingNamespace}/${s.name}"`;
  return `${s.kind} "${s.name}"`;
}
