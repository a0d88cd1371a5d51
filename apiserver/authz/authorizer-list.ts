import type { Logger } from 'pino';
import { AbacAuthorizer, parseAbacPolicies } from './abac';
import { AlwaysAllow, AlwaysDeny } from './always';
import { DEFAULT_AUTHORIZED_TTL_MS, DEFAULT_UNAUTHORIZED_TTL_MS, MAX_WEBHOOK_TIMEOUT_MS, type AuthorizerEntry } from './authorization-config';
import { DEFAULT_AUTHORIZATION_MODES, fail, type AuthorizationOptions } from './authorization-options';
import type { Authorizer } from './authorizer';
import { WebhookAuthorizer } from './webhook';
import { loadWebhookKubeconfig } from './webhook-kubeconfig';

/** What the authorizer list is made of: the one RBAC and Node authorizer (their state is shared across reloads), file access, a clock and a log. */
export interface AuthorizerParts {
  rbac: Authorizer;
  node: Authorizer;
  read: (path: string) => string;
  /** Clock for webhook caches (ms). */
  now: () => number;
  log: Logger;
}

/** The authorizers in chain order, and the webhook authorizers among them (their connections are closed when replaced). */
export interface AuthorizerList {
  list: Authorizer[];
  hooks: WebhookAuthorizer[];
}

/** Reads a file named by a flag; an unreadable file is an AuthorizationConfigError naming the flag. */
export function readConfigText(read: (path: string) => string, file: string, what: string): string {
  try {
    return read(file);
  } catch (err) {
    return fail(`${what} ${file}: ${(err as Error).message}`);
  }
}

/** The authorizers of an AuthorizationConfiguration's entries (A.3), in order. */
export function authorizersFromEntries(entries: readonly AuthorizerEntry[], p: AuthorizerParts): AuthorizerList {
  const out: AuthorizerList = { list: [], hooks: [] };
  for (const e of entries) {
    if (e.type === 'Node') out.list.push(p.node);
    else if (e.type === 'RBAC') out.list.push(p.rbac);
    else if (e.type === 'AlwaysAllow') out.list.push(new AlwaysAllow());
    else if (e.type === 'AlwaysDeny') out.list.push(new AlwaysDeny());
    else {
      const w = e.webhook!;
      const hook = new WebhookAuthorizer({
        name: e.name,
        endpoint: loadWebhookKubeconfig(w.kubeConfigFile, p.read),
        version: w.version,
        timeoutMs: w.timeoutMs,
        authorizedTtlMs: w.authorizedTtlMs,
        unauthorizedTtlMs: w.unauthorizedTtlMs,
        cacheAuthorized: w.cacheAuthorized,
        cacheUnauthorized: w.cacheUnauthorized,
        failurePolicy: w.failurePolicy,
        matchConditions: w.matchConditions,
        now: p.now,
        log: p.log,
      });
      out.hooks.push(hook);
      out.list.push(hook);
    }
  }
  return out;
}

/** The authorizers of --authorization-mode (A.2), in flag order; the options must have been validated. */
export function authorizersFromModes(o: AuthorizationOptions, p: AuthorizerParts): AuthorizerList {
  const out: AuthorizerList = { list: [], hooks: [] };
  for (const m of o.modes ?? DEFAULT_AUTHORIZATION_MODES) {
    switch (m) {
      case 'AlwaysAllow':
        out.list.push(new AlwaysAllow());
        break;
      case 'AlwaysDeny':
        out.list.push(new AlwaysDeny());
        break;
      case 'ABAC':
        out.list.push(new AbacAuthorizer(parseAbacPolicies(readConfigText(p.read, o.policyFile!, '--authorization-policy-file'), o.policyFile)));
        break;
      case 'RBAC':
        out.list.push(p.rbac);
        break;
      case 'Node':
        out.list.push(p.node);
        break;
      case 'Webhook': {
        const hook = new WebhookAuthorizer({
          name: 'webhook',
          endpoint: loadWebhookKubeconfig(o.webhookConfigFile!, p.read),
          version: (o.webhookVersion ?? 'v1beta1') as 'v1' | 'v1beta1',
          timeoutMs: MAX_WEBHOOK_TIMEOUT_MS,
          authorizedTtlMs: o.webhookAuthorizedTtlMs ?? DEFAULT_AUTHORIZED_TTL_MS,
          unauthorizedTtlMs: o.webhookUnauthorizedTtlMs ?? DEFAULT_UNAUTHORIZED_TTL_MS,
          cacheAuthorized: true,
          cacheUnauthorized: true,
          failurePolicy: 'NoOpinion',
          matchConditions: [],
          now: p.now,
          log: p.log,
        });
        out.hooks.push(hook);
        out.list.push(hook);
        break;
      }
    }
  }
  return out;
}
