import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { AdmissionPlugin } from '../admission/admission';
import { AuthorizationChain } from '../authz/authorization-chain';
import { parseAuthorizationConfig } from '../authz/authorization-config';
import { AuthorizationConfigReloader } from '../authz/authorization-config-reloader';
import { usesNodeAuthorizer, validateAuthorizationOptions, type AuthorizationOptions } from '../authz/authorization-options';
import { authorizersFromEntries, authorizersFromModes, readConfigText, type AuthorizerList, type AuthorizerParts } from '../authz/authorizer-list';
import { NodeAuthorizer } from '../authz/node-authorizer';
import { NodeGraph } from '../authz/node-graph';
import { RbacAuthorizer, rbacPolicyHandler, RBAC_RESOURCES } from '../authz/rbac-authorizer';
import { defaultBindings, defaultClusterRoles } from '../authz/rbac-defaults';
import { RbacEscalationCheck } from '../authz/rbac-escalation';
import { RBAC_GROUP, RbacPolicy } from '../authz/rbac-policy';
import { rulesReview } from '../authz/rule-lister';
import { ClusterRoleAggregationController } from '../controllers/clusterrole-aggregation';
import { RbacBootstrap } from '../controllers/rbac-bootstrap';
import { makeReviewHandlers, type VirtualCreate } from '../handlers/review-handlers';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { HealthCheck } from '../server/health';
import { StoreInformers, typedHandler } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';

export interface AuthorizationDeps {
  store: ObjectStore;
  cache: WatchCache;
  registry: ResourceRegistry;
  log: Logger;
  /** Clock for webhook caches (ms). */
  now?: () => number;
  readFile?: (path: string) => string;
  reloadIntervalMs?: number;
  /** The process's shared informers; default a factory of its own over store and cache, started by run(). */
  informers?: StoreInformers;
}

/** Everything authorization gives the server. */
export interface Authorization {
  /** Pass as ApiServerOptions.authz. */
  chain: AuthorizationChain;
  /** The RBAC state (from the watch cache). */
  policy: RbacPolicy;
  /** Admission plugin for RBAC escalation prevention; add to the AdmissionChain (validating). */
  escalation: AdmissionPlugin;
  /** Create handlers of the review APIs, keyed "group/version/resource". */
  reviewHandlers: ReadonlyMap<string, VirtualCreate>;
  /** readyz checks: the default RBAC policy is in place and the informers have synced. */
  checks: HealthCheck[];
  /** ClusterRole aggregation; a controller-manager loop: run it where the other controllers run (under leader election). */
  aggregation: ClusterRoleAggregationController;
  /** Runs the informers, the default-policy reconciler and config reloads until the signal aborts (on every replica). */
  run(signal: AbortSignal): Promise<void>;
  /** Releases webhook connections and file watchers. */
  close(): Promise<void>;
}

/**
 * Builds the authorizer chain from the flags or the AuthorizationConfiguration (A.2-A.7), with the
 * RBAC state, the Node graph, the escalation check and the review API handlers around it.
 * Throws AuthorizationConfigError for any malformed flag, policy file or configuration, so the
 * server can exit with the message before it serves.
 */
export function buildAuthorizers(o: AuthorizationOptions, deps: AuthorizationDeps): Authorization {
  validateAuthorizationOptions(o);
  const read = deps.readFile ?? ((p: string) => readFileSync(p, 'utf8'));
  const log = deps.log.child({ component: 'authorization' });
  const policy = new RbacPolicy();
  const graph = new NodeGraph();
  const parts: AuthorizerParts = { rbac: new RbacAuthorizer(policy), node: new NodeAuthorizer(graph), read, now: deps.now ?? Date.now, log };
  const { chain, reloader, initial } = buildChain(o, parts, deps.reloadIntervalMs);

  const escalation = new RbacEscalationCheck(policy, async (user, info) => (await chain.decide({ user, info })).allowed);
  const reviewHandlers = makeReviewHandlers({ decide: (a) => chain.decide(a), rules: (u, ns) => rulesReview(chain.list(), u, ns) });

  const type = (group: string, resource: string): ResourceType => {
    const t = deps.registry.lookup(group, 'v1', resource);
    if (!t) throw new Error(`${resource}.${group || 'core'}/v1 is not registered`);
    return t;
  };
  const informers = deps.informers ?? new StoreInformers(deps.store, deps.cache, { log });
  const rbacTypes = RBAC_RESOURCES.map((r) => type(RBAC_GROUP, r));
  const nodeTypes = [type('', 'pods'), type('', 'persistentvolumeclaims'), type('', 'persistentvolumes')];
  const synced = (types: ResourceType[]) => types.every((t) => informers.informer(t).hasSynced());
  const bootstrap = new RbacBootstrap(deps.store, deps.registry, log.child({ controller: 'rbac-bootstrap' }));
  const aggregation = new ClusterRoleAggregationController(deps.store, deps.cache, deps.registry, log.child({ controller: 'clusterrole-aggregation' }), informers);
  const defaultsIndexed = (): boolean =>
    defaultClusterRoles().every((r) => policy.has('ClusterRole', '', r.name)) && defaultBindings().every((b) => policy.has(b.namespace ? 'RoleBinding' : 'ClusterRoleBinding', b.namespace ?? '', b.name));
  const usesNode = usesNodeAuthorizer(o);

  return {
    chain,
    policy,
    escalation,
    reviewHandlers,
    aggregation,
    checks: [
      { name: 'poststarthook/rbac/bootstrap-roles', check: () => (bootstrap.isDone() && defaultsIndexed() ? undefined : 'default RBAC policy not in place yet') },
      { name: 'authorization-informers', check: () => (synced(rbacTypes) && (!usesNode || synced(nodeTypes)) ? undefined : 'authorization informers not synced') },
    ],
    async run(signal) {
      // The RBAC state and the node graph follow their types for as long as the server runs.
      const follow = (types: ResourceType[], h: Parameters<typeof typedHandler>[1]) => {
        for (const t of types) informers.informer(t).addEventHandler(typedHandler(t, h), { signal });
      };
      follow(rbacTypes, rbacPolicyHandler(policy));
      if (usesNode) follow(nodeTypes, graph);
      informers.start(signal);
      // A factory of our own is ours to wait for; a shared one, its owner's.
      const tasks = [bootstrap.run(signal), ...(deps.informers ? [] : [informers.stopped()])];
      reloader?.run(signal);
      await Promise.all(tasks);
    },
    async close() {
      if (reloader) await reloader.close();
      else await Promise.all(initial.hooks.map((h) => h.close()));
    },
  };
}

/** The chain of the flags' modes, or of the configuration file with the reloader that keeps it current. */
function buildChain(o: AuthorizationOptions, parts: AuthorizerParts, reloadIntervalMs: number | undefined): { chain: AuthorizationChain; reloader?: AuthorizationConfigReloader; initial: AuthorizerList } {
  if (o.configFile === undefined) {
    const initial = authorizersFromModes(o, parts);
    return { chain: new AuthorizationChain(initial.list), initial };
  }
  const text = readConfigText(parts.read, o.configFile, '--authorization-config');
  const initial = authorizersFromEntries(parseAuthorizationConfig(text, o.configFile), parts);
  const chain = new AuthorizationChain(initial.list);
  const reloader = new AuthorizationConfigReloader({
    file: o.configFile,
    initial: { text, hooks: initial.hooks },
    chain,
    build: (entries) => authorizersFromEntries(entries, parts),
    read: parts.read,
    ...(reloadIntervalMs !== undefined ? { intervalMs: reloadIntervalMs } : {}),
    log: parts.log,
  });
  return { chain, reloader, initial };
}
