/** CSR helpers for the h6 tests: real PKCS#10 requests and CSR objects as a node agent would send them. */
import { webcrypto } from 'node:crypto';
import type { KObject } from '../../../../apiserver/api/types';
import { x509 } from '../../../../common/x509';
import { adminCtx, type Fixture } from './store-fixture';
import type { WriteContext } from '../../../../apiserver/store/object-store';
import type { UserInfo } from '../../../../apiserver/api/user';

export interface RequestOptions {
  subject: string;
  dnsNames?: string[];
  /** RSA instead of ECDSA P-256. */
  rsa?: boolean;
  /** Flip a byte of the signature so it no longer verifies. */
  forge?: boolean;
}

/** A PEM CERTIFICATE REQUEST signed by a fresh key. */
export async function makeRequestPem(o: RequestOptions): Promise<string> {
  const alg = o.rsa
    ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }
    : { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']));
  const extensions: x509.Extension[] = [];
  if (o.dnsNames?.length) extensions.push(new x509.SubjectAlternativeNameExtension(o.dnsNames.map((d) => ({ type: 'dns' as const, value: d }))));
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: o.subject, keys, signingAlgorithm: alg, extensions });
  if (!o.forge) return csr.toString('pem');
  const der = Buffer.from(csr.rawData);
  der[der.length - 2] ^= 0x01; // inside the signature's last integer: still parses, no longer verifies
  return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE REQUEST-----\n`;
}

export function requester(user: UserInfo): WriteContext {
  return { ...adminCtx, user };
}

export const bootstrapper: UserInfo = { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] };

/**
 * Creates a CSR. spec.username/uid/groups are written from `by` as the create path is meant to
 * set them from the authenticated user (upstream's PrepareForCreate).
 */
export async function createCsr(
  f: Fixture,
  name: string,
  o: { pem: string; signerName?: string; usages?: string[]; expirationSeconds?: number; by?: UserInfo },
): Promise<KObject> {
  const by = o.by ?? bootstrapper;
  const spec: Record<string, unknown> = {
    request: Buffer.from(o.pem).toString('base64'),
    signerName: o.signerName ?? 'svc.io/kube-apiserver-client-kubelet',
    usages: o.usages ?? ['digital signature', 'client auth'],
    username: by.username,
    groups: by.groups,
  };
  if (o.expirationSeconds !== undefined) spec.expirationSeconds = o.expirationSeconds;
  return f.store.create(
    csrType(f),
    '',
    { apiVersion: 'certificates.svc.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec },
    requester(by),
  );
}

export function csrType(f: Fixture) {
  return f.type('certificates.svc.io', 'v1', 'certificatesigningrequests');
}

/**
 * Sets status.conditions as an admin would: Approved and Denied through the approval
 * sub-resource (the only path that may add them), anything else through status.
 */
export async function setConditions(f: Fixture, name: string, conditions: Array<Record<string, string>>): Promise<KObject> {
  const subresource = conditions.some((c) => c.type === 'Approved' || c.type === 'Denied') ? 'approval' : 'status';
  const { object } = await f.store.update(
    csrType(f),
    '',
    name,
    (cur) => ({ ...cur!, status: { ...((cur!.status) ?? {}), conditions } }),
    { ...adminCtx, subresource },
  );
  return object;
}

export function conditionTypes(csr: KObject | null): string[] {
  const cs = (csr?.status as { conditions?: Array<{ type: string }> } | undefined)?.conditions ?? [];
  return cs.map((c) => c.type);
}

export function certificatePem(csr: KObject | null): string | undefined {
  const c = (csr?.status as { certificate?: string } | undefined)?.certificate;
  return c ? Buffer.from(c, 'base64').toString('utf8') : undefined;
}
