import type { NameRule } from './meta-validation';
import type { ResourceType } from './resource-type';

/**
 * Which name rule validateObjectMeta applies to a type, as upstream's per-kind ValidateXName:
 * namespaces and StatefulSets are DNS-1123 labels, services DNS-1035 labels (must start with a letter), and
 * PersistentVolumes, PersistentVolumeClaims, CertificateSigningRequests, RBAC objects and APIServices only need
 * to be a valid path segment; everything else is a DNS-1123 subdomain.
 */
export function nameRuleFor(t: Pick<ResourceType, 'group' | 'resource'>): NameRule {
  if (t.group === '') {
    if (t.resource === 'namespaces') return 'label';
    if (t.resource === 'services') return 'dns1035';
    if (t.resource === 'persistentvolumes' || t.resource === 'persistentvolumeclaims') return 'path-segment';
  }
  // Upstream ValidateStatefulSetName: a DNS label, so that <name>-<ordinal> pod names and hostnames are valid.
  if (t.group === 'apps' && t.resource === 'statefulsets') return 'label';
  if (t.group === 'certificates.svc.io' && t.resource === 'certificatesigningrequests') return 'path-segment';
  if (t.group === 'rbac.authorization.svc.io') return 'path-segment';
  // APIServices are named <version>.<group>, "v1." for the core group: kube-aggregator checks the two parts itself (the type's validate).
  if (t.group === 'apiregistration.svc.io' && t.resource === 'apiservices') return 'path-segment';
  return 'subdomain';
}
