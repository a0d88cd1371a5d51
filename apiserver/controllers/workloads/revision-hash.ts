/**
 * The hashes that name controller revisions and label the pods made from them (upstream
 * pkg/controller/history HashControllerRevision and pkg/controller ComputeHash): a 32-bit FNV hash
 * printed in decimal and then spelled with upstream's rand.SafeEncodeString alphabet (no vowels,
 * no look-alike digits), so a hash never reads as a word.
 *
 * Upstream hashes Go's JSON of the revision data (HashControllerRevision, FNV-1) and a
 * go-spew dump of the pod template (ComputeHash, FNV-1a). We hash the canonical JSON of the same
 * values (keys sorted), so equal templates get equal hashes; the digits differ from upstream's,
 * which nothing outside the cluster compares.
 */

import { decodedForm } from '../../registry/semantic-equal';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1 32-bit (Go's hash/fnv New32): multiply, then xor. */
export function fnv32(bytes: Uint8Array, h = FNV_OFFSET): number {
  for (const b of bytes) h = (Math.imul(h, FNV_PRIME) ^ b) >>> 0;
  return h >>> 0;
}

/** FNV-1a 32-bit (Go's hash/fnv New32a): xor, then multiply. */
export function fnv32a(bytes: Uint8Array, h = FNV_OFFSET): number {
  for (const b of bytes) h = Math.imul(h ^ b, FNV_PRIME) >>> 0;
  return h >>> 0;
}

const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** Upstream rand.SafeEncodeString: each character mapped into the alphabet by its code. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += ALPHANUMS[s.charCodeAt(i) % ALPHANUMS.length];
  return out;
}

/** JSON with every object's keys sorted and null or empty-list fields left out (decodedForm): the same text for values upstream would decode alike. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(sortKeys(decodedForm(v)));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined) out[k] = sortKeys(x);
  }
  return out;
}

/** Upstream HashControllerRevision: FNV-1 of the data, then of the collision count's decimal digits when there is one. */
export function hashRevisionData(data: unknown, collisionCount?: number): string {
  let h = fnv32(Buffer.from(canonicalJson(data)));
  if (collisionCount !== undefined) h = fnv32(Buffer.from(String(collisionCount)), h);
  return safeEncodeString(String(h));
}

/** Upstream ComputeHash (DaemonSet revision hashes, Deployment pod-template-hash): FNV-1a of the template, then of the collision count as 4 little-endian bytes. */
export function computeTemplateHash(template: unknown, collisionCount?: number): string {
  let h = fnv32a(Buffer.from(canonicalJson(template)));
  if (collisionCount !== undefined) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(collisionCount >>> 0);
    h = fnv32a(b, h);
  }
  return safeEncodeString(String(h));
}

/** Upstream ControllerRevisionName: prefix-hash, the prefix cut to 223 characters so the name stays a valid DNS subdomain. */
export function controllerRevisionName(prefix: string, hash: string): string {
  return `${prefix.length > 223 ? prefix.slice(0, 223) : prefix}-${hash}`;
}
