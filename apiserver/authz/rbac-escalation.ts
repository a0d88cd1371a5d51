import { errors } from '../api/errors';
import { jsonEqual } from '../api/json-equal';
import type { KObject } from '../api/types';
import type { AdmissionAttributes } from '../store/write-admission';
import type { UserInfo } from '../api/user';
import type { RequestInfo } from '../server/request-info';
import { MASTERS_GROUP } from './authorization-chain';
import { FULL_AUTHORITY, uncoveredRules } from './rbac-covers';
import { RBAC_GROUP, type RbacPolicy } from './rbac-policy';
import { bindingOf, rulesOf } from './rbac-authorizer';
import { compactRule, type PolicyRule } from './rbac-rules';

/** Asks the whole authorizer chain whether the user may do what info describes. */
export type AuthorizedFn = (user: UserInfo, info: RequestInfo) => Promise<boolean>;

/**
 * Escalation prevention (A.6), as upstream's RBAC registry does it: a Role or ClusterRole may be
 * created or updated only by someone who already holds all its permissions in that scope or may
 * `escalate` on it; a binding only by someone who holds the referenced role's permissions in that
 * scope or may `bind` it. An aggregationRule needs full authority. system:masters is exempt
 * (initial bootstrap). Changes that touch only ownerReferences and finalizers (the garbage
 * collector's) are not checked. A validating admission plugin by shape (admission/'s
 * AdmissionPlugin): the wiring puts it in the admission chain.
 */
export class RbacEscalationCheck {
  readonly name = 'RBACEscalation';

  constructor(
    private readonly policy: RbacPolicy,
    private readonly authorized: AuthorizedFn,
  ) {}

  /** Rejects with 403 when the write would grant permissions the user does not hold. */
  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.type.group !== RBAC_GROUP || (a.operation !== 'CREATE' && a.operation !== 'UPDATE') || !a.object) return;
    if (a.user.groups.includes(MASTERS_GROUP)) return;
    if (a.oldObject && onlyGcFieldsChanged(a.object, a.oldObject)) return;
    const ns = a.type.namespaced ? a.namespace : '';
    switch (a.type.resource) {
      case 'roles':
      case 'clusterroles':
        return this.checkRole(a, a.object, ns);
      case 'rolebindings':
      case 'clusterrolebindings':
        return this.checkBinding(a, a.object, ns);
    }
  }

  private async checkRole(a: AdmissionAttributes, role: KObject, ns: string): Promise<void> {
    if (await this.authorized(a.user, verbInfo('escalate', a.type.resource, ns, a.name))) return;
    this.confirm(a, ns, rulesOf(role));
    if (a.type.resource === 'clusterroles' && (role.aggregationRule || a.oldObject?.aggregationRule)) {
      if (uncoveredRules(this.policy.rulesFor(a.user, ns), FULL_AUTHORITY).length > 0) {
        throw forbidden(a, 'must have cluster-admin privileges to use the aggregationRule');
      }
    }
  }

  private async checkBinding(a: AdmissionAttributes, obj: KObject, ns: string): Promise<void> {
    const b = bindingOf(a.type.resource === 'rolebindings' ? 'RoleBinding' : 'ClusterRoleBinding', obj);
    const resource = b.roleRef.kind === 'Role' ? 'roles' : 'clusterroles';
    if (await this.authorized(a.user, verbInfo('bind', resource, ns, b.roleRef.name))) return;
    const rules = this.policy.roleRules(b.roleRef, ns);
    if (!rules) throw errors.notFound(resource, b.roleRef.name, RBAC_GROUP);
    this.confirm(a, ns, rules);
  }

  /** Throws 403 listing the permissions the user does not hold. */
  private confirm(a: AdmissionAttributes, ns: string, wanted: readonly PolicyRule[]): void {
    const missing = uncoveredRules(this.policy.rulesFor(a.user, ns), wanted);
    if (missing.length === 0) return;
    const groups = a.user.groups.map((g) => JSON.stringify(g)).join(' ');
    throw forbidden(
      a,
      `user "${a.user.username}" (groups=[${groups}]) is attempting to grant RBAC permissions not currently held:\n${missing.map(compactRule).join('\n')}`,
    );
  }
}

function forbidden(a: AdmissionAttributes, why: string) {
  return errors.forbidden(`${a.type.resource}.${a.type.group} "${a.name}" is forbidden: ${why}`);
}

function verbInfo(verb: string, resource: string, namespace: string, name: string): RequestInfo {
  return { isResourceRequest: true, path: '', verb, apiPrefix: 'apis', apiGroup: RBAC_GROUP, apiVersion: 'v1', namespace, resource, subresource: '', name };
}

/** Upstream IsOnlyMutatingGCFields: the objects differ only in ownerReferences and finalizers (and server-managed metadata). */
function onlyGcFieldsChanged(obj: KObject, old: KObject): boolean {
  const strip = (o: KObject) => {
    const { ownerReferences: _o, finalizers: _f, managedFields: _m, resourceVersion: _r, generation: _g, ...meta } = o.metadata;
    return { ...o, metadata: meta };
  };
  return jsonEqual(strip(obj), strip(old));
}
