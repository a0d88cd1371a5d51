import type * as Undici from 'undici';

let loaded: typeof Undici | undefined;

/**
 * undici, loaded on first use: the server needs an HTTP client only for webhooks and OIDC
 * discovery, and loading it costs ~10 MB of memory that most installations never use.
 */
export function undici(): typeof Undici {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (see above): undici stays out of memory until a webhook or OIDC issuer needs it
  loaded ??= require('undici') as typeof Undici;
  return loaded;
}
