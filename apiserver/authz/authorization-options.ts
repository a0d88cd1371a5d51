import { AuthorizationConfigError } from './config-error';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'RBAC', 'Node', 'Webhook'] as const;
/** The modes used when neither --authorization-mode nor --authorization-config is given (kubeadm's choice; upstream's bare default is AlwaysAllow). */
export const DEFAULT_AUTHORIZATION_MODES: readonly string[] = ['Node', 'RBAC'];

/** The authorization flags (A.2-A.5), as config/flags.ts parses them. */
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

export function fail(msg: string): never {
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

/** Whether the Node authorizer is in use (always possible with a configuration file, which can be reloaded to add it). */
export function usesNodeAuthorizer(o: AuthorizationOptions): boolean {
  return o.configFile !== undefined || (o.modes ?? DEFAULT_AUTHORIZATION_MODES).includes('Node');
}
