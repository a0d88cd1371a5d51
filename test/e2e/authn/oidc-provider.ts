/** A local HTTPS OpenID provider for the e2e tests: discovery, JWKS with switchable keys, and token minting. */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, SignJWT, type JWK } from '../../../apiserver/authn/jose';
import { createCA, issue } from '../../../apiserver/pki/certs';

export interface ProviderKey {
  kid: string;
  alg: 'RS256' | 'ES256' | 'ES384';
  priv: KeyObject;
  jwk: JWK;
}

export async function providerKey(kid: string, alg: ProviderKey['alg'] = 'RS256'): Promise<ProviderKey> {
  const pair = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: alg === 'ES256' ? 'P-256' : 'P-384' });
  return { kid, alg, priv: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' } };
}

export class OidcProvider {
  keys: ProviderKey[] = [];
  /** When set, every request answers 503 (the provider is "down"). */
  down = false;
  requests: string[] = [];
  url = '';
  caFile = '';
  private server?: Server;
  private dir = '';

  async start(): Promise<void> {
    const ca = await createCA('oidc-ca');
    const serving = await issue(ca, { commonName: 'idp', dnsNames: ['localhost'], ips: ['127.0.0.1'], usage: 'server', validityMs: 86_400_000 });
    this.dir = mkdtempSync(join(tmpdir(), 'svc-h11-oidc-'));
    this.caFile = join(this.dir, 'ca.crt');
    writeFileSync(this.caFile, ca.certPem);
    this.server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      this.requests.push(req.url ?? '');
      if (this.down) {
        res.writeHead(503);
        res.end('down');
        return;
      }
      const json = (body: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/.well-known/openid-configuration') return json({ issuer: this.url, jwks_uri: `${this.url}/keys`, id_token_signing_alg_values_supported: ['RS256', 'ES256'] });
      if (req.url === '/keys') return json({ keys: this.keys.map((k) => k.jwk) });
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** An id_token signed with the key, with iss this provider and exp in 10 minutes unless the claims say otherwise. */
  async token(k: ProviderKey, claims: Record<string, unknown>, nowMs = Date.now()): Promise<string> {
    const now = Math.floor(nowMs / 1000);
    return new SignJWT({ iss: this.url, iat: now, exp: now + 600, ...claims }).setProtectedHeader({ alg: k.alg, kid: k.kid }).sign(k.priv);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
