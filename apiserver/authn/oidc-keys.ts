import type { Logger } from 'pino';
import { undici } from '../api/lazy-undici';
import { isObject } from '../api/types';
import { createLocalJWKSet, type JSONWebKeySet } from './jose';

/** Fetches a JSON document over HTTPS; rejects on network errors, non-200 answers and non-JSON bodies. */
export type FetchJson = (url: string) => Promise<unknown>;

/** The default fetcher: HTTPS only, verified against caPem (or the host's root CAs), bounded by timeoutMs. */
export function httpsJsonFetcher(caPem: string | undefined, timeoutMs = 10_000): FetchJson {
  const agent = new (undici().Agent)({ connect: { ...(caPem ? { ca: caPem } : {}), rejectUnauthorized: true }, connectTimeout: timeoutMs });
  return async (url) => {
    if (!url.startsWith('https://')) throw new Error(`refusing to fetch ${url}: only https is allowed`);
    const res = await undici().request(url, { dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`GET ${url}: HTTP ${res.statusCode}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new Error(`GET ${url}: answer is not JSON`);
    }
  };
}

type KeyGetter = ReturnType<typeof createLocalJWKSet>;

export interface OidcKeySourceOptions {
  /** The issuer URL; discovery's issuer must equal it exactly. */
  issuerUrl: string;
  /** Override of the discovery location (5.3 issuer.discoveryURL). */
  discoveryUrl?: string;
  fetchJson: FetchJson;
  /** Least time between two fetches (rate limit for refetch on an unknown key id). Default 10 s. */
  minRefreshIntervalMs?: number;
  now?: () => number;
  log: Logger;
}

/**
 * An OIDC provider's signing keys (5.2): discovery document → jwks_uri → JWKS, fetched when first
 * needed and again when a token names a key id we do not have (key rotation), at most once per
 * minRefreshIntervalMs. When the provider is down the keys already fetched keep being used, with
 * a log line saying so; the service does not contact the provider per request.
 */
export class OidcKeySource {
  private keys: KeyGetter | undefined;
  private kids = new Set<string>();
  private lastAttempt = -Infinity;
  private inflight: Promise<void> | undefined;
  private lastError: string | undefined;

  constructor(private readonly o: OidcKeySourceOptions) {}

  /** The key set, fetching it first if we have none (subject to the rate limit); rejects when no keys could ever be fetched. */
  async getKeys(): Promise<KeyGetter> {
    if (!this.keys) await this.refresh('initial fetch');
    if (!this.keys) throw new Error(`no signing keys for issuer ${this.o.issuerUrl} yet: ${this.lastError ?? 'not fetched'}`);
    return this.keys;
  }

  /** True when the key id is among the fetched keys. */
  hasKid(kid: string): boolean {
    return this.kids.has(kid);
  }

  /** Refetches discovery and JWKS unless fetched within the rate limit; never rejects (failures keep the old keys). */
  async refresh(reason: string): Promise<void> {
    if (this.inflight) return this.inflight;
    const now = (this.o.now ?? Date.now)();
    if (now - this.lastAttempt < (this.o.minRefreshIntervalMs ?? 10_000)) return;
    this.lastAttempt = now;
    this.inflight = this.fetch(reason).finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async fetch(reason: string): Promise<void> {
    const base = this.o.issuerUrl.replace(/\/+$/, '');
    const discoveryUrl = this.o.discoveryUrl || `${base}/.well-known/openid-configuration`;
    try {
      const doc = await this.o.fetchJson(discoveryUrl);
      if (!isObject(doc)) throw new Error(`discovery document at ${discoveryUrl} is not an object`);
      if (doc.issuer !== this.o.issuerUrl) throw new Error(`oidc: issuer did not match the issuer returned by provider, expected "${this.o.issuerUrl}" got "${String(doc.issuer)}"`);
      if (typeof doc.jwks_uri !== 'string' || doc.jwks_uri === '') throw new Error(`discovery document at ${discoveryUrl} has no jwks_uri`);
      const jwks = await this.o.fetchJson(doc.jwks_uri);
      if (!isObject(jwks) || !Array.isArray(jwks.keys)) throw new Error(`JWKS at ${doc.jwks_uri} has no keys list`);
      const set = jwks as unknown as JSONWebKeySet;
      this.keys = createLocalJWKSet(set);
      this.kids = new Set(set.keys.map((k) => k.kid).filter((k): k is string => typeof k === 'string'));
      this.lastError = undefined;
      this.o.log.info({ issuer: this.o.issuerUrl, keys: set.keys.length, reason }, 'fetched OIDC signing keys');
    } catch (err) {
      this.lastError = (err as Error).message;
      this.o.log.warn(
        { issuer: this.o.issuerUrl, err: this.lastError, reason, cachedKeys: this.kids.size },
        this.keys ? 'OIDC provider unreachable or invalid; keeping the signing keys fetched before' : 'OIDC provider unreachable or invalid; tokens of this issuer fail until its keys can be fetched',
      );
    }
  }
}
