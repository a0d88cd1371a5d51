/**
 * Extended resource names, as upstream's IsExtendedResourceName: a domain-prefixed qualified name
 * ("example.com/gpu") that is not a native resource and still is a qualified name with
 * "requests." in front (the quota form). Native resources are the unprefixed ones and those under
 * kubernetes.io; svc also reserves its own domain svc.io the same way (its built-in resources
 * live there), which upstream of course does not know about.
 */

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const RESERVED_DOMAINS = ['kubernetes.io/', 'svc.io/'];

function isDnsSubdomain(s: string): boolean {
  return s.length > 0 && s.length <= 253 && s.split('.').every((l) => DNS_LABEL.test(l));
}

function isQualifiedName(s: string): boolean {
  const parts = s.split('/');
  if (parts.length > 2) return false;
  const [prefix, name] = parts.length === 2 ? [parts[0], parts[1]] : ['', parts[0]];
  if (parts.length === 2 && !isDnsSubdomain(prefix)) return false;
  return name.length > 0 && name.length <= 63 && NAME.test(name);
}

/** Why `name` is not a valid extended resource name, or undefined when it is. */
export function extendedResourceNameProblem(name: string): string | undefined {
  if (!name.includes('/')) return `resource name ${JSON.stringify(name)} must be domain-prefixed (e.g. example.com/${name || 'device'})`;
  if (RESERVED_DOMAINS.some((d) => name.includes(d))) return `resource name ${JSON.stringify(name)} is in a reserved domain (kubernetes.io, svc.io)`;
  if (name.startsWith('requests.')) return `resource name ${JSON.stringify(name)} must not start with "requests."`;
  if (!isQualifiedName(`requests.${name}`)) return `resource name ${JSON.stringify(name)} is not a qualified name (lower-case DNS domain, "/", a name of at most 63 letters, digits, "-", "_" or ".")`;
  return undefined;
}

export function isExtendedResourceName(name: string): boolean {
  return extendedResourceNameProblem(name) === undefined;
}
