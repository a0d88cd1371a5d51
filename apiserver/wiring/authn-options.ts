import { parseRequiredClaims } from '../authn/authentication-config';
import type { AuthenticationOptions } from './authentication';
import type { ApiServerFlags } from '../config/flags';

/** The authentication methods of spec 5 as the flags configure them. */
export function authenticationOptions(flags: ApiServerFlags, clientCaPem: string): AuthenticationOptions {
  const a = flags.authn;
  return {
    clientCaPem,
    tokenAuthFile: flags.tokenAuthFile,
    enableBootstrapTokenAuth: flags.enableBootstrapTokenAuth,
    dataDir: flags.dataDir,
    serviceAccount: {
      issuers: a.serviceAccountIssuers,
      keyFiles: a.serviceAccountKeyFiles,
      signingKeyFile: a.serviceAccountSigningKeyFile,
      tlsPrivateKeyFile: flags.tlsPrivateKeyFile,
      lookup: a.serviceAccountLookup,
      maxTokenExpirationSeconds: a.serviceAccountMaxTokenExpirationS,
    },
    apiAudiences: a.apiAudiences,
    oidc: a.oidcIssuerUrl
      ? {
          issuerUrl: a.oidcIssuerUrl,
          clientId: a.oidcClientId ?? '',
          usernameClaim: a.oidcUsernameClaim,
          usernamePrefix: a.oidcUsernamePrefix,
          groupsClaim: a.oidcGroupsClaim,
          groupsPrefix: a.oidcGroupsPrefix,
          requiredClaims: parseRequiredClaims(a.oidcRequiredClaims),
          caFile: a.oidcCaFile,
          signingAlgs: a.oidcSigningAlgs,
        }
      : undefined,
    authenticationConfigFile: a.authenticationConfig,
    webhook: a.webhookConfigFile
      ? { configFile: a.webhookConfigFile, version: `authentication.svc.io/${a.webhookVersion}`, cacheTtlMs: a.webhookCacheTtlMs }
      : undefined,
    requestHeader:
      a.requestheaderUsernameHeaders.length > 0
        ? {
            clientCaFile: a.requestheaderClientCaFile ?? '',
            usernameHeaders: a.requestheaderUsernameHeaders,
            groupHeaders: a.requestheaderGroupHeaders,
            extraHeadersPrefix: a.requestheaderExtraHeadersPrefix,
            uidHeaders: a.requestheaderUidHeaders,
            allowedNames: a.requestheaderAllowedNames,
          }
        : undefined,
    // Spec 5.6: anonymous is on by default unless the only authorization mode is AlwaysAllow.
    anonymousAuth: a.anonymousAuth ?? (flags.authorizationMode?.length === 1 && flags.authorizationMode[0] === 'AlwaysAllow' ? false : undefined),
  };
}
