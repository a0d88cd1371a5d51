import { readFileSync, watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';
import type { AdmissionPlugin } from '../admission/admission';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import type { HealthCheck } from '../server/health';
import { StoreInformers, typedHandler } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { ClusterRoleAggregationController } from '../controllers/clusterrole-aggregation';
import { RbacBootstrap } from '../controllers/rbac-bootstrap';
import { makeReviewHandlers, type VirtualCreate } from '../handlers/review-handlers';
import { AbacAuthorizer, parseAbacPolicies } from './abac';
import { AlwaysAllow, AlwaysDeny } from './always';
import { AuthorizationChain } from './authorization-chain';
import {
  DEFAULT_AUTHORIZED_TTL_MS,
  DEFAULT_UNAUTHORIZED_TTL_MS,
  MAX_WEBHOOK_TIMEOUT_MS,
  parseAuthorizationConfig,
  type AuthorizerEntry,
} from './authorization-config';
import type { Authorizer } from './authorizer';
import { AuthorizationConfigError } from './config-error';
import { NodeAuthorizer } from './node-authorizer';
import { NodeGraph } from './node-graph';
import { RbacAuthorizer, rbacPolicyHandler, RBAC_RESOURCES } from './rbac-authorizer';
import { defaultBindings, defaultClusterRoles } from './rbac-defaults';
import { RbacEscalationCheck } from './rbac-escalation';
import { RBAC_GROUP, RbacPolicy } from './rbac-policy';
import { rulesReview } from './rule-lister';
import { WebhookAuthorizer } from './webhook';
import { loadWebhookKubeconfig } from './webhook-kubeconfig';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'RBAC', 'Node', 'Webhook'] as const;
/** The modes used when neither --authorization-mode nor --authorization-config is given (kubeadm's choice; upstream's bare default is AlwaysAllow). */
export const DEFAULT_AUTHORIZATION_MODES: readonly string[] = ['Node', 'RBAC'];
/** Section 8: the configuration is re-read on change, else every 60 s. */
export const CONFIG_RELOAD_INTERVAL_MS = 60_000;

/** The authorization flags (A.2-A.5), as the lead's flag parser produces them. */
export interface AuthorizationOptions {
  /** --authorization-mode, comma list split; undefined when the flag was not given. */
  modes?: readonly string[];
  /** --authorization-policy-file (ABAC). */
  policyFile?: string;
  /** --authorization-webhook-config-file (kubeconfig format). */
  webhookConfigFile?: string;
  /** --authorization-webhook-cache-authorized-ttl in ms (default 5m). */
  webhookAuthorizedTtlMs?: number;
  /** --authorization-webhook-cache-unauthorized-ttl in ms (default 30s). */
  webhookUnauthorizedTtlMs?: number;
  /** --authorization-webhook-version: v1 or v1beta1 (default v1beta1). */
  webhookVersion?: string;
  /** --authorization-config (AuthorizationConfiguration file). */
  configFile?: string;
}

export interface AuthorizationDeps {
  store: ObjectStore;
  cache: WatchCache;
  registry: ResourceRegistry;
  log: Logger;
  /** The process's shared informers; default a factory of its own over store and cache, started by run(). */
  informers?: StoreInformers;
  /** Clock for webhook caches (ms). */
  now?: () => number;
  readFile?: (path: string) => string;
  reloadIntervalMs?: number;
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

function fail(msg: string): never {
  throw new AuthorizationConfigError(msg);
}

/** Checks the flag combination (A.2, section 7); throws AuthorizationConfigError with a clear message. */
export function validateAuthorizationOptions(o: AuthorizationOptions): void {
  const webhookFlags = o.webhookConfigFile !== undefined || o.webhookAuthorizedTtlMs !== undefined || o.webhookUnauthorizedTtlMs !== undefined || o.webhookVersion !== undefined;
  if (o.configFile !== undefined) {
    if (o.modes !== undefined || o.policyFile !== undefined || webhookFlags) {
      fail('--authorization-config can not be specified together with --authorization-mode, --authorization-policy-file or --authorization-webhook-* flags');
    }
    return;
  }
  const modes = o.modes ?? DEFAULT_AUTHORIZATION_MODES;
  if (modes.length === 0) fail('--authorization-mode: at least one authorization mode must be given');
  const seen = new Set<string>();
  for (const m of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) fail(`--authorization-mode: unknown mode "${m}"; supported modes: ${AUTHORIZATION_MODES.join(', ')}`);
    if (seen.has(m)) fail(`--authorization-mode: mode "${m}" is specified more than once`);
    seen.add(m);
  }
  if (seen.has('ABAC') && !o.policyFile) fail('--authorization-mode=ABAC needs --authorization-policy-file');
  if (!seen.has('ABAC') && o.policyFile) fail('--authorization-policy-file can only be used with --authorization-mode including ABAC');
  if (seen.has('Webhook') && !o.webhookConfigFile) fail('--authorization-mode=Webhook needs --authorization-webhook-config-file');
  if (!seen.has('Webhook') && webhookFlags) fail('--authorization-webhook-* flags can only be used with --authorization-mode including Webhook');
  if (o.webhookVersion !== undefined && o.webhookVersion !== 'v1' && o.webhookVersion !== 'v1beta1') fail(`--authorization-webhook-version: must be v1 or v1beta1, not "${o.webhookVersion}"`);
  for (const [flag, v] of [['--authorization-webhook-cache-authorized-ttl', o.webhookAuthorizedTtlMs], ['--authorization-webhook-cache-unauthorized-ttl', o.webhookUnauthorizedTtlMs]] as const) {
    if (v !== undefined && v < 0) fail(`${flag}: must not be negative`);
  }
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
  const now = deps.now ?? Date.now;
  const log = deps.log.child({ component: 'authorization' });
  const policy = new RbacPolicy();
  const graph = new NodeGraph();
  const rbac = new RbacAuthorizer(policy);
  const node = new NodeAuthorizer(graph);
  let webhooks: WebhookAuthorizer[] = [];

  const readText = (file: string, what: string): string => {
    try {
      return read(file);
    } catch (err) {
      return fail(`${what} ${file}: ${(err as Error).message}`);
    }
  };

  const fromEntries = (entries: readonly AuthorizerEntry[]): { list: Authorizer[]; hooks: WebhookAuthorizer[] } => {
    const list: Authorizer[] = [];
    const hooks: WebhookAuthorizer[] = [];
    for (const e of entries) {
      if (e.type === 'Node') list.push(node);
      else if (e.type === 'RBAC') list.push(rbac);
      else if (e.type === 'AlwaysAllow') list.push(new AlwaysAllow());
      else if (e.type === 'AlwaysDeny') list.push(new AlwaysDeny());
      else {
        const w = e.webhook!;
        const hook = new WebhookAuthorizer({
          name: e.name,
          endpoint: loadWebhookKubeconfig(w.kubeConfigFile, read),
          version: w.version,
          timeoutMs: w.timeoutMs,
          authorizedTtlMs: w.authorizedTtlMs,
          unauthorizedTtlMs: w.unauthorizedTtlMs,
          cacheAuthorized: w.cacheAuthorized,
          cacheUnauthorized: w.cacheUnauthorized,
          failurePolicy: w.failurePolicy,
          matchConditions: w.matchConditions,
          now,
          log,
        });
        hooks.push(hook);
        list.push(hook);
      }
    }
    return { list, hooks };
  };

  let authorizers: Authorizer[];
  let configText = '';
  const usesNode = () => o.configFile !== undefined || (o.modes ?? DEFAULT_AUTHORIZATION_MODES).includes('Node');
  if (o.configFile !== undefined) {
    configText = readText(o.configFile, '--authorization-config');
    const built = fromEntries(parseAuthorizationConfig(configText, o.configFile));
    authorizers = built.list;
    webhooks = built.hooks;
  } else {
    authorizers = [];
    for (const m of o.modes ?? DEFAULT_AUTHORIZATION_MODES) {
      switch (m) {
        case 'AlwaysAllow':
          authorizers.push(new AlwaysAllow());
          break;
        case 'AlwaysDeny':
          authorizers.push(new AlwaysDeny());
          break;
        case 'ABAC':
          authorizers.push(new AbacAuthorizer(parseAbacPolicies(readText(o.policyFile!, '--authorization-policy-file'), o.policyFile)));
          break;
        case 'RBAC':
          authorizers.push(rbac);
          break;
        case 'Node':
          authorizers.push(node);
          break;
        case 'Webhook': {
          const hook = new WebhookAuthorizer({
            name: 'webhook',
            endpoint: loadWebhookKubeconfig(o.webhookConfigFile!, read),
            version: (o.webhookVersion ?? 'v1beta1') as 'v1' | 'v1beta1',
            timeoutMs: MAX_WEBHOOK_TIMEOUT_MS,
            authorizedTtlMs: o.webhookAuthorizedTtlMs ?? DEFAULT_AUTHORIZED_TTL_MS,
            unauthorizedTtlMs: o.webhookUnauthorizedTtlMs ?? DEFAULT_UNAUTHORIZED_TTL_MS,
            cacheAuthorized: true,
            cacheUnauthorized: true,
            failurePolicy: 'NoOpinion',
            matchConditions: [],
            now,
            log,
          });
          webhooks.push(hook);
          authorizers.push(hook);
          break;
        }
      }
    }
  }

  const chain = new AuthorizationChain(authorizers);
  const escalation = new RbacEscalationCheck(policy, async (user, info) => (await chain.decide({ user, info })).allowed);
  const reviewHandlers = makeReviewHandlers({ decide: (a) => chain.decide(a), rules: (u, ns) => rulesReview(chain.list(), u, ns) });

  const type = (group: string, resource: string): ResourceType => {
    const t = deps.registry.lookup(group, 'v1', resource);
    if (!t) throw new Error(`${resource}.${group || 'core'}/v1 is not registered`);
    return t;
  };
  const informers = deps.informers ?? new StoreInformers(deps.store, deps.cache, { log });
  const rbacTypes = RBAC_RESOURCES.map((r) => type(RBAC_GROUP, r));
  const nodeTypes = [type('', 'pods'), type('', 'persistentvolumeclaims')];
  const synced = (types: ResourceType[]) => types.every((t) => informers.informer(t).hasSynced());
  const bootstrap = new RbacBootstrap(deps.store, deps.registry, log.child({ controller: 'rbac-bootstrap' }));
  const aggregation = new ClusterRoleAggregationController(deps.store, deps.cache, deps.registry, log.child({ controller: 'clusterrole-aggregation' }), informers);
  const defaultsIndexed = (): boolean =>
    defaultClusterRoles().every((r) => policy.has('ClusterRole', '', r.name)) && defaultBindings().every((b) => policy.has(b.namespace ? 'RoleBinding' : 'ClusterRoleBinding', b.namespace ?? '', b.name));

  let watcher: FSWatcher | undefined;
  let reloadTimer: NodeJS.Timeout | undefined;
  const reload = async (): Promise<void> => {
    let text: string;
    try {
      text = read(o.configFile!);
    } catch (err) {
      log.error({ err, file: o.configFile }, 'reading the authorization configuration failed; keeping the current one');
      return;
    }
    if (text === configText) return;
    try {
      const built = fromEntries(parseAuthorizationConfig(text, o.configFile));
      const old = webhooks;
      chain.replace(built.list);
      webhooks = built.hooks;
      configText = text;
      log.info({ file: o.configFile, authorizers: built.list.map((z) => z.name) }, 'authorization configuration reloaded');
      await Promise.all(old.map((h) => h.close()));
    } catch (err) {
      log.error({ err: (err as Error).message, file: o.configFile }, 'the changed authorization configuration is invalid; keeping the current one');
    }
  };

  return {
    chain,
    policy,
    escalation,
    reviewHandlers,
    aggregation,
    checks: [
      { name: 'poststarthook/rbac/bootstrap-roles', check: () => (bootstrap.isDone() && defaultsIndexed() ? undefined : 'default RBAC policy not in place yet') },
      { name: 'authorization-informers', check: () => (synced(rbacTypes) && (!usesNode() || synced(nodeTypes)) ? undefined : 'authorization informers not synced') },
    ],
    async run(signal) {
      // The RBAC state and the node graph follow their types for as long as the server runs.
      const follow = (types: ResourceType[], h: Parameters<typeof typedHandler>[1]) => {
        for (const t of types) informers.informer(t).addEventHandler(typedHandler(t, h), { signal });
      };
      follow(rbacTypes, rbacPolicyHandler(policy));
      if (usesNode()) follow(nodeTypes, graph);
      informers.start(signal);
      // A factory of our own is ours to wait for; a shared one, its owner's.
      const tasks = [bootstrap.run(signal), ...(deps.informers ? [] : [informers.stopped()])];
      if (o.configFile !== undefined) {
        const file = o.configFile;
        try {
          watcher = watch(file, () => void reload());
        } catch (err) {
          log.warn({ err, file }, 'cannot watch the authorization configuration; reloading every interval only');
        }
        reloadTimer = setInterval(() => void reload(), deps.reloadIntervalMs ?? CONFIG_RELOAD_INTERVAL_MS);
        signal.addEventListener('abort', () => {
          watcher?.close();
          clearInterval(reloadTimer);
        });
      }
      await Promise.all(tasks);
    },
    async close() {
      watcher?.close();
      if (reloadTimer) clearInterval(reloadTimer);
      await Promise.all(webhooks.map((h) => h.close()));
    },
  };
}
