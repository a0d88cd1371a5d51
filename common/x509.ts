// @peculiar/x509 costs ~7 MB of memory and is needed only to mint certificates (first start,
// CSR signing), so it is loaded on first use. It resolves its crypto provider through tsyringe,
// which needs the Reflect metadata polyfill loaded first; this module is the only place that
// loads the library. It is in common/ because both daemons mint certificates: apiserver/pki and
// the CSR signer, and the agent's certificate child (agent/platform/x509-child.ts).
import { webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

let loaded: typeof X509 | undefined;

function load(): typeof X509 {
  if (!loaded) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (see above): the polyfill must load before the library, and only when it is used
    require('reflect-metadata');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (see above): ~7 MB loaded only to mint certificates
    const mod = require('@peculiar/x509') as typeof X509;
    mod.cryptoProvider.set(webcrypto as unknown as Parameters<typeof mod.cryptoProvider.set>[0]);
    loaded = mod;
  }
  return loaded;
}

/** The library, loaded when a member is first used. */
export const x509: typeof X509 = new Proxy({} as typeof X509, {
  get: (_target, key) => (load() as unknown as Record<string | symbol, unknown>)[key],
});

// The types callers name (x509.Extension, ...) without loading anything.
// eslint-disable-next-line @typescript-eslint/no-namespace -- a type-only namespace merged with the lazy value, so x509.Extension etc. name types without loading the library
export declare namespace x509 {
  type Extension = X509.Extension;
  type X509Certificate = X509.X509Certificate;
  type Pkcs10CertificateRequest = X509.Pkcs10CertificateRequest;
}
