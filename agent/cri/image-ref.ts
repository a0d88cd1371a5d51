/**
 * Docker-style image reference normalisation, as containerd and the kubelet apply it
 * (github.com/distribution/reference ParseNormalizedNamed): "busybox" is
 * "docker.io/library/busybox:latest", "me/app" is "docker.io/me/app:latest", a reference without
 * tag or digest gets ":latest", and "sha256:<hex>" is an image ID, left alone.
 */

export interface ParsedImageRef {
  /** Registry host ("docker.io", "registry.k8s.io", "localhost:5000"). */
  domain: string;
  /** Repository path without the domain ("library/busybox"). */
  path: string;
  tag?: string;
  /** "sha256:<hex>" when the reference pins a digest. */
  digest?: string;
}

const ID = /^sha256:[0-9a-f]{64}$/;

/** True for an image ID ("sha256:" and 64 hex digits) rather than a name. */
export function isImageId(ref: string): boolean {
  return ID.test(ref);
}

/** Splits and normalises a reference; throws Error on an empty or malformed one. */
export function parseImageRef(ref: string): ParsedImageRef {
  const r = ref.trim();
  if (r === '' || /\s/.test(r)) {
    throw new Error(`invalid image reference ${JSON.stringify(ref)}`);
  }
  let rest = r;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!/^[a-z0-9]+:[0-9a-f]{32,}$/.test(digest)) throw new Error(`invalid digest in image reference ${JSON.stringify(ref)}`);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!/^[\w][\w.-]{0,127}$/.test(tag)) throw new Error(`invalid tag in image reference ${JSON.stringify(ref)}`);
  }
  let domain = 'docker.io';
  let path = rest;
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    const first = rest.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost') {
      domain = first;
      path = rest.slice(slash + 1);
    }
  }
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  if (path === '' || !/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(path)) {
    throw new Error(`invalid repository name in image reference ${JSON.stringify(ref)}`);
  }
  if (tag === undefined && digest === undefined) tag = 'latest';
  const parsed: ParsedImageRef = { domain, path };
  if (tag !== undefined) parsed.tag = tag;
  if (digest !== undefined) parsed.digest = digest;
  return parsed;
}

/** "domain/path" of a reference. */
export function repository(p: ParsedImageRef): string {
  return `${p.domain}/${p.path}`;
}

/** The fully qualified form: "docker.io/library/busybox:latest", "repo@sha256:...", or an ID unchanged. */
export function normalizeImageRef(ref: string): string {
  if (isImageId(ref)) return ref;
  const p = parseImageRef(ref);
  return repository(p) + (p.tag !== undefined ? `:${p.tag}` : '') + (p.digest !== undefined ? `@${p.digest}` : '');
}
