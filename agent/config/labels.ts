/**
 * --node-labels parsing and checks. Label syntax is Kubernetes' qualified-name rules; the
 * restriction on the svc.io namespace follows the kubelet's (and the NodeRestriction admission
 * plugin's) rule, so an agent cannot give itself labels the control plane reserves. The allow-list
 * is the one the API server's NodeRestriction admission enforces (apiserver/api/well-known.ts).
 */
import { isKubeletLabel, isReservedLabel, KUBELET_LABEL_NAMESPACES, KUBELET_LABELS } from '../../apiserver/api/well-known';

const nameRe = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const dnsLabelRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function isSubdomain(s: string): boolean {
  return s.length > 0 && s.length <= 253 && s.split('.').every((p) => dnsLabelRe.test(p));
}

/** Returns why a label key is invalid, or undefined. */
export function checkLabelKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : '';
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (slash >= 0 && !isSubdomain(prefix)) return `invalid label key ${JSON.stringify(key)}: prefix part must be a lowercase RFC 1123 subdomain`;
  if (name === '' || name.length > 63 || !nameRe.test(name)) {
    return `invalid label key ${JSON.stringify(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', must start and end with an alphanumeric character, and be at most 63 characters`;
  }
  return undefined;
}

/** Returns why a label value is invalid, or undefined. */
export function checkLabelValue(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63 || !nameRe.test(value)) {
    return `invalid label value ${JSON.stringify(value)}: must be 63 characters or less and consist of alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character`;
  }
  return undefined;
}

/** Parses "k=v,k2=v2"; throws Error on a pair without '=' or with an empty key. */
export function parseLabelsFlag(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(',')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`${JSON.stringify(pair)} must be formatted as key=value`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

/** Every problem with a set of node labels, one message each. */
export function checkNodeLabels(labels: Record<string, string>): string[] {
  const problems: string[] = [];
  const restricted: string[] = [];
  for (const [k, v] of Object.entries(labels)) {
    const why = checkLabelKey(k) ?? checkLabelValue(v);
    if (why) {
      problems.push(why);
      continue;
    }
    // svc.io, and upstream's kubernetes.io and k8s.io spellings of it, are the platform's (as the kubelet's check).
    if (!isReservedLabel(k) || isKubeletLabel(k)) continue;
    restricted.push(k);
  }
  if (restricted.length > 0) {
    problems.push(
      `unknown 'svc.io' labels specified: [${restricted.join(' ')}]; labels in the 'svc.io' namespace must begin with an allowed prefix (${KUBELET_LABEL_NAMESPACES.join(', ')}) or be in the specifically allowed set (${[...KUBELET_LABELS].join(', ')}); the same holds for their kubernetes.io and k8s.io spellings`,
    );
  }
  return problems;
}
