/**
 * The simulator's image store and its pretend registry. Images are found by ID, by any name form
 * ("busybox", "docker.io/library/busybox:latest") and by repo digest, as containerd resolves them.
 * IDs and digests are hashes of the normalised name, so they are stable across runs. The registry
 * is open (every reference pulls) unless a catalogue is given; failures are opt-in (pullFailures),
 * except that a registry under the reserved .invalid domain (RFC 2606: never resolves) fails as
 * containerd fails on an unknown host, so a real agent process on the simulator can be shown a
 * failing pull without any configuration.
 */
import { createHash } from 'node:crypto';
import { RuntimeError } from './errors';
import { isImageId, normalizeImageRef, parseImageRef, repository } from './image-ref';
import type { RuntimeErrorCode } from './errors';
import type { PullFailureSpec, SimImageSpec } from './sim-options';
import type { Image, ImageSpec } from './types';

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

interface Known {
  ref: string;
  size: number;
  uid?: number;
  username: string;
  pinned: boolean;
}

function known(spec: SimImageSpec): Known {
  const s = typeof spec === 'string' ? { ref: spec } : spec;
  const ref = normalizeImageRef(s.ref);
  const k: Known = {
    ref,
    size: s.size ?? 1024 * 1024 + (parseInt(sha(ref).slice(0, 4), 16) % 4096) * 256,
    username: s.username ?? '',
    pinned: s.pinned ?? false,
  };
  if (s.uid !== undefined) k.uid = s.uid;
  return k;
}

/** The image a registry would serve for a normalised reference. */
function imageFor(k: Known): Image {
  const p = parseImageRef(k.ref);
  const digest = p.digest ?? `sha256:${sha(`manifest:${k.ref}`)}`;
  const image: Image = {
    id: `sha256:${sha(`config:${repository(p)}:${p.tag ?? ''}@${p.digest ?? ''}`)}`,
    repoTags: p.tag !== undefined && p.digest === undefined ? [k.ref] : [],
    repoDigests: [`${repository(p)}@${digest}`],
    size: k.size,
    username: k.username,
    spec: { image: k.ref },
    pinned: k.pinned,
  };
  if (k.uid !== undefined) image.uid = k.uid;
  return image;
}

/** What containerd answers for a registry host that does not resolve (code Unknown). */
function noSuchHost(ref: string): RuntimeError {
  const p = parseImageRef(ref);
  return new RuntimeError(
    'Unknown',
    `failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": failed to do request: Head "https://${p.domain}/v2/${p.path}/manifests/${p.tag ?? 'latest'}": dial tcp: lookup ${p.domain}: no such host`,
    'PullImage',
  );
}

/** Message containerd gives when a registry has no such reference (wrapped as NotFound). */
function notInRegistry(ref: string): RuntimeError {
  return new RuntimeError(
    'NotFound',
    `failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": ${ref}: not found`,
    'PullImage',
  );
}

interface Failure {
  code: RuntimeErrorCode;
  message?: string;
}

export class SimImageStore {
  private readonly images = new Map<string, Image>(); // by ID
  private readonly registry = new Map<string, Known>(); // by normalised ref
  private readonly failures = new Map<string, Failure>(); // by normalised ref
  /** Whether references outside the catalogue pull too (no catalogue was given). */
  private readonly open: boolean;

  /** `registry` 'any': an open registry serving every reference (the present images' details kept); a list: only those. */
  constructor(present: readonly SimImageSpec[], registry: readonly SimImageSpec[] | 'any', failures: readonly PullFailureSpec[] = []) {
    this.open = registry === 'any';
    for (const spec of registry === 'any' ? present : registry) {
      const k = known(spec);
      this.registry.set(k.ref, k);
    }
    for (const f of failures) {
      const spec = typeof f === 'string' ? { image: f } : f;
      this.failures.set(normalizeImageRef(spec.image), { code: spec.code ?? 'NotFound', ...(spec.message !== undefined ? { message: spec.message } : {}) });
    }
    for (const spec of present) this.add(spec);
  }

  /** Makes an image present (as `ctr images import` would). Returns it. */
  add(spec: SimImageSpec): Image {
    return this.store(imageFor(known(spec)));
  }

  /** Lets PullImage find this reference from now on (and lifts a configured failure of it). */
  publish(spec: SimImageSpec): void {
    const k = known(spec);
    this.registry.set(k.ref, k);
    this.failures.delete(k.ref);
  }

  /** The present image a reference, ID or digest names; undefined when absent or unparsable. */
  resolve(ref: string): Image | undefined {
    if (isImageId(ref)) return this.images.get(ref);
    let norm: string;
    try {
      norm = normalizeImageRef(ref);
    } catch {
      return undefined;
    }
    for (const image of this.images.values()) {
      if (image.repoTags.includes(norm) || image.repoDigests.includes(norm)) return image;
    }
    return undefined;
  }

  /** All present images, or those the filter's image names. */
  list(filter?: ImageSpec): Image[] {
    if (filter?.image) {
      const one = this.resolve(filter.image);
      return one ? [copy(one)] : [];
    }
    return [...this.images.values()].map(copy);
  }

  /** Pulls from the pretend registry; returns the image reference (repo digest). Rejects NotFound / InvalidArgument. */
  pull(ref: string): Image {
    let norm: string;
    try {
      norm = normalizeImageRef(ref);
    } catch (e) {
      throw new RuntimeError('InvalidArgument', `failed to pull image "${ref}": ${(e as Error).message}`, 'PullImage');
    }
    if (parseImageRef(norm).domain.split(':')[0].endsWith('.invalid')) throw noSuchHost(norm);
    const failure = this.failures.get(norm);
    if (failure) {
      if (failure.code === 'NotFound' && failure.message === undefined) throw notInRegistry(norm);
      throw new RuntimeError(failure.code, failure.message ?? `failed to pull image "${norm}": ${failure.code}`, 'PullImage');
    }
    const k = this.registry.get(norm) ?? (isImageId(norm) ? undefined : this.byDigest(norm)) ?? (this.open && !isImageId(norm) ? known(norm) : undefined);
    if (!k) throw notInRegistry(norm);
    const image = imageFor(k);
    if (norm.includes('@')) image.repoTags = [];
    return this.store(image);
  }

  /** Removes the image and all its names. Returns whether it was present. */
  remove(ref: string): boolean {
    const image = this.resolve(ref);
    if (!image) return false;
    this.images.delete(image.id);
    return true;
  }

  private byDigest(norm: string): Known | undefined {
    for (const k of this.registry.values()) if (imageFor(k).repoDigests.includes(norm)) return k;
    return undefined;
  }

  /** Adds or merges names into an image already stored under the same ID. */
  private store(image: Image): Image {
    const existing = this.images.get(image.id);
    if (existing) {
      for (const t of image.repoTags) if (!existing.repoTags.includes(t)) existing.repoTags.push(t);
      for (const d of image.repoDigests) if (!existing.repoDigests.includes(d)) existing.repoDigests.push(d);
      return copy(existing);
    }
    this.images.set(image.id, image);
    return copy(image);
  }
}

function copy(i: Image): Image {
  const c: Image = { ...i, repoTags: [...i.repoTags], repoDigests: [...i.repoDigests] };
  if (i.spec) c.spec = { ...i.spec };
  return c;
}
