import type { webcrypto } from 'node:crypto';
import type { Logger } from 'pino';
import { isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import { isObject } from '../api/types';
import { NODE_USER_PREFIX, NODES_GROUP } from '../api/well-known';
import { signPublicKey, type KeyPairPem } from '../pki/certs';
import { x509 } from '../../common/x509';
import type { ResourceRegistry } from '../registry/builtin';
import type { ResourceType } from '../registry/resource-type';
import { canonicalKey } from '../api/group-names';
import { SIGNERS } from '../registry/types/certificatesigningrequests';
import { followEach, StoreInformers } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import { rfc3339 } from '../api/time';
import type { WatchCache } from '../store/watch-cache';
import { csrCertificate, csrSpec, hasTrueCondition, type CsrCondition } from '../registry/types/csr-fields';
import { controllerContext } from '../store/system-context';

const ctx = { ...controllerContext('certificate-controller'), subresource: 'status' };
/** Upstream --cluster-signing-duration default: 8760h. */
const ONE_YEAR_MS = 365 * 24 * 3600_000;
const SAN_OID = '2.5.29.17';

/** What the controllers read from a CSR's spec.request. */
export interface ParsedRequest {
  request: x509.Pkcs10CertificateRequest;
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ips: string[];
  /** SAN entries other than DNS names and IPs (emails, URIs, ...), as "type:value". */
  otherNames: string[];
}

/**
 * Decodes spec.request: base64 of one PEM block "CERTIFICATE REQUEST" (as upstream's ParseCSR;
 * "NEW CERTIFICATE REQUEST" is accepted too). Throws an Error saying what is wrong. Does not
 * check the signature (see verifyRequest).
 */
export function parseRequest(requestB64: unknown): ParsedRequest {
  if (typeof requestB64 !== 'string' || requestB64 === '') throw new Error('spec.request is empty');
  const pem = Buffer.from(requestB64, 'base64').toString('latin1');
  const m = /-----BEGIN (NEW )?CERTIFICATE REQUEST-----([A-Za-z0-9+/=\s]+)-----END (NEW )?CERTIFICATE REQUEST-----/.exec(pem);
  if (!m) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let request: x509.Pkcs10CertificateRequest;
  try {
    request = new x509.Pkcs10CertificateRequest(Buffer.from(m[2].replace(/\s+/g, ''), 'base64'));
  } catch (err) {
    throw new Error(`the certificate request cannot be parsed: ${(err as Error).message}`, { cause: err });
  }
  const dnsNames: string[] = [];
  const ips: string[] = [];
  const otherNames: string[] = [];
  const ext = request.getExtension(SAN_OID);
  if (ext) {
    const san = ext instanceof x509.SubjectAlternativeNameExtension ? ext : new x509.SubjectAlternativeNameExtension(ext.rawData);
    for (const n of san.names.items) {
      if (n.type === 'dns') dnsNames.push(n.value);
      else if (n.type === 'ip') ips.push(n.value);
      else otherNames.push(`${n.type}:${n.value}`);
    }
  }
  return {
    request,
    commonName: request.subjectName.getField('CN')[0] ?? '',
    organizations: request.subjectName.getField('O'),
    dnsNames,
    ips,
    otherNames,
  };
}

/** Whether the request is signed by the key it carries (upstream CheckSignature). */
export async function verifyRequest(p: ParsedRequest): Promise<boolean> {
  try {
    return await p.request.verify();
  } catch {
    return false;
  }
}

/** Upstream ValidateKubeletClientCSR: why a request is not a node client certificate request, or undefined when it is one. */
export function kubeletClientProblem(p: ParsedRequest, usages: readonly string[] | undefined): string | undefined {
  if (p.organizations.length !== 1 || p.organizations[0] !== NODES_GROUP) return `subject organization is not ${NODES_GROUP}`;
  if (p.dnsNames.length > 0 || p.ips.length > 0 || p.otherNames.length > 0) return 'subject alternative names are not allowed';
  if (!p.commonName.startsWith(NODE_USER_PREFIX) || p.commonName === NODE_USER_PREFIX) return `subject common name does not begin with ${NODE_USER_PREFIX}`;
  const u = new Set(usages ?? []);
  const plain = u.size === 2 && u.has('digital signature') && u.has('client auth');
  const rsa = u.size === 3 && u.has('digital signature') && u.has('client auth') && u.has('key encipherment');
  if (!plain && !rsa) return 'usages did not match ["client auth" "digital signature" "key encipherment"]';
  return undefined;
}

/** Upstream validAPIServerClientUsages: client auth required; digital signature and key encipherment optional; nothing else. */
export function clientUsagesProblem(usages: readonly string[] | undefined): string | undefined {
  let clientAuth = false;
  for (const u of usages ?? []) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

export interface CsrSignerOptions {
  /** The cluster CA that signs client certificates (pki.ca). */
  ca: KeyPairPem;
  now: () => Date;
  log: Logger;
  /** Longest validity issued (upstream --cluster-signing-duration, default one year). */
  maxValidityMs?: number;
  /** The process's shared informers; default a factory of its own over store and cache. */
  informers?: StoreInformers;
}

/**
 * The in-process signer (upstream pkg/controller/certificates/signer) for
 * svc.io/kube-apiserver-client-kubelet and svc.io/kube-apiserver-client: an approved CSR that is
 * neither denied nor failed and has no certificate gets one from the cluster CA, valid for
 * min(spec.expirationSeconds, maxValidityMs), written to status.certificate (base64 of PEM, the
 * wire form of upstream's []byte) through the status path. A request that does not parse, whose
 * signature does not verify, or whose subject or usages the signer does not allow gets a Failed
 * condition instead, so the requester stops waiting.
 */
export class CsrSigner {
  private readonly informers: StoreInformers;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly types: ResourceRegistry,
    private readonly opts: CsrSignerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
  }

  /** Signs until the signal aborts: every CSR added or changed is looked at, as the informer has it. */
  async run(signal: AbortSignal): Promise<void> {
    await followEach(this.informers, this.csrType(), signal, (csr) => this.handle(csr), (name, err) => this.opts.log.warn({ err, csr: name }, 'signing failed; retrying'));
  }

  /** Handles one CSR by name, as the store has it now: signs it, fails it, or leaves it alone. */
  async sync(name: string): Promise<void> {
    let csr: KObject;
    try {
      csr = await this.store.get(this.csrType(), '', name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    await this.handle(csr);
  }

  private async handle(csr: KObject): Promise<void> {
    const t = this.csrType();
    const name = csr.metadata.name!;
    if (!signable(csr)) return;
    const spec = csrSpec(csr);
    // Upstream's spelling (kubernetes.io/kube-apiserver-client) names the same signer (issue 17).
    const signer = canonicalKey(spec.signerName ?? '');
    if (signer !== SIGNERS.apiserverClientKubelet && signer !== SIGNERS.apiserverClient) return;
    let parsed: ParsedRequest;
    try {
      parsed = parseRequest(spec.request);
    } catch (err) {
      return this.fail(t, csr, 'InvalidRequest', (err as Error).message);
    }
    if (!(await verifyRequest(parsed))) return this.fail(t, csr, 'InvalidRequest', 'the certificate request signature does not verify');
    const problem = signer === SIGNERS.apiserverClientKubelet ? kubeletClientProblem(parsed, spec.usages) : clientUsagesProblem(spec.usages);
    if (problem) return this.fail(t, csr, 'SignerValidationFailure', problem);
    const max = this.opts.maxValidityMs ?? ONE_YEAR_MS;
    const requested = typeof spec.expirationSeconds === 'number' && spec.expirationSeconds > 0 ? spec.expirationSeconds * 1000 : max;
    // The library types its keys with the DOM's CryptoKey, which this project does not load; at run time it is webcrypto's.
    const certPem = await signPublicKey(this.opts.ca, (await parsed.request.publicKey.export()) as webcrypto.CryptoKey, {
      commonName: parsed.commonName,
      organizations: parsed.organizations,
      dnsNames: parsed.dnsNames,
      ips: parsed.ips,
      usage: 'client',
      validityMs: Math.min(requested, max),
      now: this.opts.now(),
    });
    const certificate = Buffer.from(certPem).toString('base64');
    await this.store.update(
      t,
      '',
      name,
      (current) => {
        // Someone else decided meanwhile (denied, failed, signed, or recreated under the same name).
        if (!current || current.metadata.uid !== csr.metadata.uid || !signable(current)) return current ?? csr;
        const status = isObject(current.status) ? current.status : (current.status = {});
        status.certificate = certificate;
        return current;
      },
      ctx,
    );
    this.opts.log.info({ csr: name, signer: spec.signerName, subject: parsed.commonName }, 'certificate issued');
  }

  private async fail(t: ResourceType, csr: KObject, reason: string, message: string): Promise<void> {
    const name = csr.metadata.name!;
    await this.store.update(
      t,
      '',
      name,
      (current) => {
        if (!current || current.metadata.uid !== csr.metadata.uid || !signable(current)) return current ?? csr;
        const status = (isObject(current.status) ? current.status : (current.status = {})) as { conditions?: CsrCondition[] };
        const now = rfc3339(this.opts.now());
        status.conditions = [...(Array.isArray(status.conditions) ? status.conditions : []), { type: 'Failed', status: 'True', reason, message, lastUpdateTime: now, lastTransitionTime: now }];
        return current;
      },
      ctx,
    );
    this.opts.log.warn({ csr: name, reason, message }, 'certificate request failed');
  }

  private csrType(): ResourceType {
    const t = this.types.lookup('certificates.svc.io', 'v1', 'certificatesigningrequests');
    if (!t) throw new Error('certificatesigningrequests type not registered');
    return t;
  }
}

/** Approved, not denied, not failed, not yet signed. */
function signable(csr: KObject): boolean {
  return hasTrueCondition(csr, 'Approved') && !hasTrueCondition(csr, 'Denied') && !hasTrueCondition(csr, 'Failed') && csrCertificate(csr) === undefined;
}
