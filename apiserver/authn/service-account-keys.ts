import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../pki/bootstrap';

/** The JWS algorithms service account tokens use; the key type decides which one (as upstream's serviceaccount.JWTTokenGenerator). */
export type SaAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

export interface SaVerificationKey {
  key: KeyObject;
  alg: SaAlgorithm;
  /** Upstream's key id: unpadded base64url of the SHA-256 of the DER public key. */
  kid: string;
}

export interface SaSigningKey extends SaVerificationKey {
  privateKey: KeyObject;
}

export class KeyFileError extends Error {
  override readonly name = 'KeyFileError';
}

/**
 * The algorithm a key signs with: RSA → RS256; ECDSA by curve P-256 → ES256, P-384 → ES384,
 * P-521 → ES512. Anything else (Ed25519, RSA-PSS keys, other curves) is refused.
 */
export function algorithmFor(key: KeyObject): SaAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve === 'prime256v1' || curve === 'P-256') return 'ES256';
    if (curve === 'secp384r1' || curve === 'P-384') return 'ES384';
    if (curve === 'secp521r1' || curve === 'P-521') return 'ES512';
    throw new KeyFileError(`unsupported ECDSA curve ${curve ?? 'unknown'}: use P-256, P-384 or P-521`);
  }
  throw new KeyFileError(`unsupported key type ${key.asymmetricKeyType ?? 'unknown'}: service account keys must be RSA or ECDSA`);
}

export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return createHash('sha256').update(der).digest('base64url');
}

function verificationKey(publicKey: KeyObject): SaVerificationKey {
  return { key: publicKey, alg: algorithmFor(publicKey), kid: keyIdOf(publicKey) };
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * Public keys of a PEM text (5.1 --service-account-key-file): public keys (PKIX or PKCS#1),
 * private keys (PKCS#8, PKCS#1, SEC1; their public half is used) and certificates. `source`
 * names the file in errors.
 */
export function parsePublicKeys(pem: string, source: string): SaVerificationKey[] {
  const out: SaVerificationKey[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const block = m[0];
    const type = m[1];
    try {
      if (type === 'CERTIFICATE') out.push(verificationKey(new X509Certificate(block).publicKey));
      else if (type.endsWith('PRIVATE KEY')) out.push(verificationKey(createPublicKey(createPrivateKey(block))));
      else if (type.endsWith('PUBLIC KEY')) out.push(verificationKey(createPublicKey(block)));
    } catch (err) {
      if (err instanceof KeyFileError) throw new KeyFileError(`${source}: ${err.message}`);
      throw new KeyFileError(`${source}: cannot parse ${type} block: ${(err as Error).message}`);
    }
  }
  if (out.length === 0) throw new KeyFileError(`${source}: data does not contain any valid RSA or ECDSA public keys`);
  return out;
}

/** The private key of a PEM text (--service-account-signing-key-file). */
export function parseSigningKey(pem: string, source: string): SaSigningKey {
  for (const m of pem.matchAll(PEM_BLOCK)) {
    if (!m[1].endsWith('PRIVATE KEY')) continue;
    try {
      const privateKey = createPrivateKey(m[0]);
      return { ...verificationKey(createPublicKey(privateKey)), privateKey };
    } catch (err) {
      if (err instanceof KeyFileError) throw new KeyFileError(`${source}: ${err.message}`);
      throw new KeyFileError(`${source}: cannot parse ${m[1]} block: ${(err as Error).message}`);
    }
  }
  throw new KeyFileError(`${source}: no RSA or ECDSA private key found`);
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new KeyFileError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

export function loadPublicKeyFiles(paths: readonly string[]): SaVerificationKey[] {
  return paths.flatMap((p) => parsePublicKeys(readText(p), p));
}

export function loadSigningKeyFile(path: string): SaSigningKey {
  return parseSigningKey(readText(path), path);
}

/**
 * Without --service-account-signing-key-file the server signs with its own key, so service
 * account tokens work out of the box: an RSA 2048 key kept at <data-dir>/pki/sa.key (mode 0600,
 * public half in sa.pub), made once and reused, as kubeadm lays out its sa.key.
 */
export function ensureGeneratedSigningKey(dataDir: string): { path: string; key: SaSigningKey } {
  const dir = join(dataDir, 'pki');
  const path = join(dir, 'sa.key');
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileAtomic(path, privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 0o600);
    writeFileAtomic(join(dir, 'sa.pub'), publicKey.export({ format: 'pem', type: 'spki' }).toString(), 0o644);
  }
  return { path, key: loadSigningKeyFile(path) };
}
