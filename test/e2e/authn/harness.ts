/**
 * In-process svc-apiserver for the authentication e2e tests, until main.ts wires these flags:
 * the real ApiServer over a real SqliteStorage in a temp dir, its own PKI, and
 * buildAuthentication(...) for everything of section 5, wired as main.ts is asked to: TLS
 * naming every client CA, impersonation between authentication and authorization, the review
 * resources as virtual types and the token sub-resource.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Agent } from 'undici';
import { AdmissionChain } from '../../../apiserver/admission/admission';
import { ApiError } from '../../../apiserver/api/errors';
import { buildAuthentication, type Authentication, type AuthenticationOptions } from '../../../apiserver/wiring/authentication';
import { authenticateWithImpersonation } from '../../../apiserver/filters/impersonation';
import { MetricsRegistry } from '../../../apiserver/authn/metrics';
import type { Attributes, Authorizer } from '../../../apiserver/authz/authorizer';
import { AuthenticatedAllow } from './authenticated-allow';
import { AuthorizerChain } from '../../../apiserver/authz/chain';
import { ensureServerPki, type ServerPki } from '../../../apiserver/pki/bootstrap';
import { builtinTypes, ResourceRegistry } from '../../../apiserver/registry/builtin';
import { authenticationTypes } from '../../../apiserver/registry/types/authentication-types';
import { ApiServer } from '../../../apiserver/wiring/api-server';
import { SqliteStorage } from '../../../apiserver/storage/sqlite';
import { ObjectStore } from '../../../apiserver/store/object-store';
import { WatchCache } from '../../../apiserver/store/watch-cache';
import { freePort } from '../../helpers/free-port';

export interface Harness {
  url: string;
  port: number;
  dataDir: string;
  pki: ServerPki;
  /** Presents the admin certificate (system:masters). */
  admin: Agent;
  /** Trusts the CA, presents nothing. */
  anonymous: Agent;
  auth: Authentication;
  store: ObjectStore;
  registry: ResourceRegistry;
  cache: WatchCache;
  metrics: MetricsRegistry;
  /** Log lines (JSON text) written so far. */
  lines: string[];
  close(): Promise<void>;
}

/**
 * A test policy in front of AuthenticatedAllow: impersonation only for members of group
 * "impersonators" and only of names starting with "ok-" (resourceNames), anonymous reads of
 * svc-public/cluster-info (as upstream's bootstrap-signer role grants).
 */
class TestPolicy implements Authorizer {
  readonly name = 'test';
  authorize(a: Attributes): ReturnType<Authorizer['authorize']> {
    const i = a.info;
    if (i.verb === 'impersonate') {
      return Promise.resolve(a.user.groups.includes('impersonators') && i.name.startsWith('ok-') ? { decision: 'allow' } : { decision: 'deny' });
    }
    if (i.isResourceRequest && i.verb === 'get' && i.namespace === 'svc-public' && i.resource === 'configmaps' && i.name === 'cluster-info') return Promise.resolve({ decision: 'allow' });
    return Promise.resolve({ decision: 'no-opinion' });
  }
}

export type HarnessOptions = Omit<Partial<AuthenticationOptions>, 'serviceAccount'> & {
  serviceAccount?: Partial<AuthenticationOptions['serviceAccount']>;
  now?: () => Date;
  /** Extra CA bundle trusted for client certificates (besides the server's own CA). */
  extraClientCaPem?: string;
};

export async function startHarness(o: HarnessOptions = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-h11-e2e-'));
  const port = await freePort();
  const lines: string[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(s) });
  const now = o.now ?? (() => new Date());
  const pki = await ensureServerPki(dataDir, { extraNames: ['127.0.0.1'], port });
  const storage = SqliteStorage.open(join(dataDir, 'state.db'), { synchronous: 'NORMAL' });
  const cache = new WatchCache(storage, { retainMs: 300_000, now: Date.now });
  const admission = new AdmissionChain([]);
  const store = new ObjectStore(storage, cache, admission, { now, rvWaitMs: 3000 });
  const registry = new ResourceRegistry();
  for (const t of [...builtinTypes, ...authenticationTypes]) registry.register(t);
  const metrics = new MetricsRegistry();
  const { serviceAccount, now: _n, extraClientCaPem, ...rest } = o;
  let auth: Authentication;
  try {
    auth = buildAuthentication({ ...rest, clientCaPem: pki.ca.certPem + (extraClientCaPem ?? ''), serviceAccount: { ...serviceAccount }, dataDir }, { store, cache, registry, metrics, log, now });
  } catch (err) {
    await storage.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const authz = new AuthorizerChain([new TestPolicy(), new AuthenticatedAllow()]);
  const authorize = async (a: Attributes) => {
    try {
      await authz.authorize(a);
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.code === 403) return false;
      throw err;
    }
  };
  // What the wiring does: authenticate, then impersonate, then (inside ApiServer) authorize.
  const authn = { authenticate: authenticateWithImpersonation(auth.request, authorize) };
  const ac = new AbortController();
  const api = new ApiServer({
    host: '127.0.0.1',
    port,
    tls: { certPem: pki.serving.certPem, keyPem: pki.serving.keyPem },
    registry,
    store,
    cache,
    authn,
    authz,
    admission,
    subresources: auth.subresources,
    virtual: auth.virtual,
    log,
    now,
    checks: [],
    livezGraceMs: 0,
    shutdownDelayMs: 0,
    version: { gitVersion: 'v0.1.0', major: '0', minor: '1' },
  });
  let served: Promise<void> | undefined;
  await new Promise<void>((listening) => {
    served = api.run(ac.signal, listening);
    served.catch(listening); // a failed listen must not hang the start
  });
  const cacheRun = cache.run(ac.signal);
  const authRun = auth.run(ac.signal);
  await cache.whenReady();
  const tlsOpts = { ca: pki.ca.certPem, servername: 'localhost' };
  const admin = new Agent({ connect: { ...tlsOpts, cert: readAdmin(dataDir, 'crt'), key: readAdmin(dataDir, 'key') } });
  const anonymous = new Agent({ connect: tlsOpts });
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    dataDir,
    pki,
    admin,
    anonymous,
    auth,
    store,
    registry,
    cache,
    metrics,
    lines,
    async close() {
      await admin.close();
      await anonymous.close();
      ac.abort();
      await Promise.allSettled([served, cacheRun, authRun]);
      await storage.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function readAdmin(dataDir: string, ext: 'crt' | 'key'): string {
  return readFileSync(join(dataDir, 'pki', `admin.${ext}`), 'utf8');
}

/** An undici agent trusting the harness CA and presenting the given certificate (or none). */
export function agentFor(h: Harness, cert?: { certPem: string; keyPem: string }): Agent {
  return new Agent({ connect: { ca: h.pki.ca.certPem, servername: 'localhost', ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) } });
}
