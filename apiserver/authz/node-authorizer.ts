import type { UserInfo } from '../api/user';
import { fieldSelectorPins, labelSelectorOf } from './attributes';
import { LOCAL_PATH_NODE_LABEL } from '../api/local-path';
import type { Attributes, Authorizer, Decision } from './authorizer';
import type { NodeGraph } from './node-graph';
import { canonicalGroup } from '../api/group-names';
import { nodeName } from '../api/node-identity';
import { NODE_LEASE_NAMESPACE } from '../api/well-known';
import { nodeRules } from './rbac-defaults';
import { ruleAllows, type PolicyRule } from './rbac-rules';
import type { RuleList, RuleLister } from './rule-lister';

type Result = { decision: Decision; reason?: string };
const noOpinion = (reason: string): Result => ({ decision: 'no-opinion', reason });
const allow: Result = { decision: 'allow' };

/**
 * The Node mode (A.7), as upstream's node authorizer with AuthorizeNodeWithSelectors: for users
 * system:node:<name> in system:nodes, reads of secrets, config maps, claims and volumes are
 * allowed only when the graph links them to a pod bound to that node; node reads only of its own
 * Node; pod lists only with field selector spec.nodeName=<itself>; Leases only its own in
 * svc-node-lease; everything else by the static node rules (system:node), whose writes
 * NodeRestriction then limits. Anyone else: no opinion.
 */
export class NodeAuthorizer implements Authorizer, RuleLister {
  readonly name = 'Node';

  constructor(
    private readonly graph: NodeGraph,
    private readonly rules: readonly PolicyRule[] = nodeRules(),
  ) {}

  authorize(a: Attributes): Promise<Result> {
    return Promise.resolve(this.decide(a));
  }

  /** Synchronous decision (the chain awaits authorize). */
  decide(a: Attributes): Result {
    const node = nodeName(a.user);
    if (node === undefined) return { decision: 'no-opinion' };
    if (node === '') return noOpinion(`unknown node for user "${a.user.username}"`);
    const i = a.info;
    if (i.isResourceRequest && i.apiGroup === '') {
      switch (i.resource) {
        case 'secrets':
          return this.readNamespaced(node, 'secret', a);
        case 'configmaps':
          return this.readNamespaced(node, 'configmap', a);
        case 'persistentvolumeclaims':
          if (i.subresource === 'status') return this.statusUpdate(node, a);
          return this.getOnly(a, () => this.graph.references(node, 'pvc', i.namespace, i.name), node);
        case 'persistentvolumes':
          return this.volumeAccess(node, a);
        case 'serviceaccounts':
          return this.createToken(node, a);
        case 'nodes':
          return this.nodeAccess(node, a);
        case 'pods':
          return this.podAccess(node, a);
      }
    }
    if (i.isResourceRequest && canonicalGroup(i.apiGroup) === 'coordination.svc.io' && i.resource === 'leases') return this.lease(node, a);
    return this.byRules(a);
  }

  /** Nodes do not have enumerable permissions (upstream: incomplete, with this error). */
  rulesFor(user: UserInfo): RuleList {
    if (nodeName(user) === undefined) return { rules: [], incomplete: false };
    return { rules: [], incomplete: true, error: 'node authorizer does not support user rule resolution' };
  }

  private byRules(a: Attributes): Result {
    for (const r of this.rules) if (ruleAllows(a.info, r)) return allow;
    return { decision: 'no-opinion' };
  }

  private related(node: string, ok: boolean): Result {
    return ok ? allow : noOpinion(`no relationship found between node '${node}' and this object`);
  }

  private readNamespaced(node: string, kind: 'secret' | 'configmap', a: Attributes): Result {
    const i = a.info;
    if (!['get', 'list', 'watch'].includes(i.verb)) return noOpinion('can only read resources of this type');
    if (i.subresource) return noOpinion('cannot read subresource');
    if (!i.namespace) return noOpinion('can only read namespaced object of this type');
    if (!i.name) return noOpinion('No Object name found');
    return this.related(node, this.graph.references(node, kind, i.namespace, i.name));
  }

  private getOnly(a: Attributes, related: () => boolean, node: string): Result {
    const i = a.info;
    if (i.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (i.subresource) return noOpinion('cannot get subresource');
    if (!i.name) return noOpinion('No Object name found');
    return this.related(node, related());
  }

  /**
   * Volumes: get those bound to claims of its pods (upstream); beyond upstream, for svc's
   * local-path provisioner, list and watch those labelled with its name (the label selector must
   * pin it) and get, update and patch each of them (NodeRestriction allows only taking the cleanup
   * finalizer off).
   */
  private volumeAccess(node: string, a: Attributes): Result {
    const i = a.info;
    const local = () => !!i.name && this.graph.localVolumeNode(i.name) === node;
    if (i.subresource === '' && (i.verb === 'list' || i.verb === 'watch') && labelSelectorOf(a).some((r) => r.key === LOCAL_PATH_NODE_LABEL && r.operator === 'In' && r.values.length === 1 && r.values[0] === node)) return allow;
    if (i.subresource === '' && (i.verb === 'update' || i.verb === 'patch')) return this.related(node, local());
    return this.getOnly(a, () => this.graph.hasVolume(node, i.name) || local(), node);
  }

  private statusUpdate(node: string, a: Attributes): Result {
    const i = a.info;
    if (i.verb !== 'update' && i.verb !== 'patch') return noOpinion('can only get, update or patch resources of this type');
    if (!i.name) return noOpinion('No Object name found');
    return this.related(node, this.graph.references(node, 'pvc', i.namespace, i.name));
  }

  private createToken(node: string, a: Attributes): Result {
    const i = a.info;
    if (i.verb !== 'create' || !i.name) return noOpinion('can only create tokens for individual service accounts');
    if (i.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    return this.related(node, this.graph.references(node, 'serviceaccount', i.namespace, i.name));
  }

  private lease(node: string, a: Attributes): Result {
    const i = a.info;
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(i.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
    if (i.namespace !== NODE_LEASE_NAMESPACE) return noOpinion(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
    // The name is unknown to authorization on create; NodeRestriction checks it then.
    if (i.verb !== 'create' && i.name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
    return allow;
  }

  private nodeAccess(node: string, a: Attributes): Result {
    const i = a.info;
    if (['get', 'list', 'watch'].includes(i.verb) && !i.subresource) {
      if (i.name === node || fieldSelectorPins(a, 'metadata.name', node)) return allow;
      return noOpinion(`node '${node}' cannot read '${i.name}', only its own Node object`);
    }
    return this.byRules(a);
  }

  private podAccess(node: string, a: Attributes): Result {
    const i = a.info;
    if (i.subresource === '' && (i.verb === 'get' || i.verb === 'list' || i.verb === 'watch')) {
      if (i.verb !== 'get' && fieldSelectorPins(a, 'spec.nodeName', node)) return allow;
      if (!i.name) return noOpinion('can only list/watch pods with spec.nodeName field selector');
      return this.related(node, this.graph.hasPod(node, i.namespace, i.name));
    }
    return this.byRules(a);
  }
}
