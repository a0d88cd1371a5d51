import type { ExecCredentialResult } from './exec-credential';

/**
 * A source of credentials obtained at request time (a kubeconfig exec plugin, spec 5.8). get()
 * returns the current credential (the same object while it is cached); invalidate(stale) drops
 * that credential after the server answered 401 for it, so the next get() fetches a new one.
 */
export interface CredentialPlugin {
  get(): Promise<ExecCredentialResult>;
  invalidate(stale?: ExecCredentialResult): void;
}

/** How to reach and authenticate to the API server: what a kubeconfig's current context resolves to. */
export interface RestConfig {
  /** https://host:port of the API server, without a trailing slash. */
  server: string;
  /** PEM bundle of CAs trusted for the server's certificate; undefined means the system roots. */
  caPem?: string;
  /** Skip server certificate verification (kubeconfig insecure-skip-tls-verify). */
  insecureSkipTLSVerify?: boolean;
  /** Name checked against the server certificate instead of the server URL's host (tls-server-name). */
  tlsServerName?: string;
  /** Client certificate chain (PEM) for x509 authentication. */
  certPem?: string;
  /** Private key (PEM) of certPem. */
  keyPem?: string;
  /** Where certPem was read from, when it came from a file (so rotation can tell which file backs it). */
  certFile?: string;
  /** Where keyPem was read from, when it came from a file. */
  keyFile?: string;
  /** Bearer token (a bootstrap token during TLS bootstrap). */
  token?: string;
  /** Credentials from an exec plugin, fetched per request and cached by the plugin source (users[].user.exec). */
  exec?: CredentialPlugin;
  /** The kubeconfig this came from, for messages. */
  source?: string;
}
