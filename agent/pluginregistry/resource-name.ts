/**
 * Upstream's IsExtendedResourceName (k8s.io/kubernetes/pkg/apis/core/v1/helper): a name with a
 * domain prefix outside kubernetes.io, not starting with "requests.", that is still a qualified
 * name once "requests." is put in front (the form resource quota uses).
 */
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isQualifiedName(s: string): boolean {
  const parts = s.split('/');
  if (parts.length > 2) return false;
  const name = parts.length === 2 ? parts[1] : parts[0];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) return false;
  }
  return name.length > 0 && name.length <= 63 && NAME.test(name);
}

export function isExtendedResourceName(name: string): boolean {
  // Native resources: no domain, or in the kubernetes.io domain.
  if (!name.includes('/') || name.includes('kubernetes.io/')) return false;
  if (name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`);
}
