import { isIP } from 'node:net';
import { fieldError, type Cause } from '../../api/errors';
import { bothKeys } from '../../api/group-names';
import { dns1035LabelErrors, dns1123SubdomainErrors, pathSegmentErrors, portNameErrors, portNumErrors, wildcardDns1123SubdomainErrors } from '../../api/name-validation';
import type { KObject } from '../../api/types';
import { messages } from '../common-validation';
import { child, index, invalid, notSupported, required } from '../field-errors';
import { rec, recs, str, strs, type JsonMap } from '../obj-access';

/** Upstream's networking validation of Ingress (pkg/apis/networking/validation), with its messages. */

export const PATH_TYPES: readonly string[] = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];
/** The deprecated class annotation (both spellings): on create it may not be set along with spec.ingressClassName. */
const CLASS_ANNOTATION_KEYS = bothKeys('kubernetes.io/ingress.class');

/** What an update may keep that a create may not (upstream IngressValidationOptions: old objects stay updatable). */
interface Options {
  allowInvalidSecretName: boolean;
  allowInvalidWildcardHostRule: boolean;
}

/** Upstream validateIngressTypedLocalObjectReference. */
function validateResourceRef(r: JsonMap, path: string): Cause[] {
  const out: Cause[] = [];
  const group = str(r.apiGroup);
  if (group !== undefined) out.push(...messages(child(path, 'apiGroup'), group, dns1123SubdomainErrors(group)));
  for (const f of ['kind', 'name'] as const) {
    const v = str(r[f]) ?? '';
    if (!v) out.push(required(child(path, f), `${f} is required`));
    else out.push(...messages(child(path, f), v, pathSegmentErrors(v)));
  }
  return out;
}

/** Upstream validateIngressBackend: exactly one of service and resource; a service port by name or number. */
function validateBackend(b: JsonMap, path: string): Cause[] {
  const resource = rec(b.resource);
  const service = rec(b.service);
  if (resource && service) return [invalid(path, '', 'cannot set both resource and service backends')];
  if (resource) return validateResourceRef(resource, child(path, 'resource'));
  if (!service) return [invalid(path, '', 'resource or service backend is required')];
  const out: Cause[] = [];
  const sp = child(path, 'service');
  const name = str(service.name) ?? '';
  if (!name) out.push(required(child(sp, 'name')));
  else out.push(...messages(child(sp, 'name'), name, dns1035LabelErrors(name)));
  const port = rec(service.port) ?? {};
  const portName = str(port.name) ?? '';
  const portNumber = typeof port.number === 'number' ? port.number : 0;
  if (portName && portNumber) out.push(invalid(path, '', 'cannot set both port name & port number'));
  else if (portName) out.push(...messages(child(child(sp, 'port'), 'name'), portName, portNameErrors(portName)));
  else if (portNumber) out.push(...messages(child(child(sp, 'port'), 'number'), portNumber, portNumErrors(portNumber)));
  else out.push(required(path, 'port name or number is required'));
  return out;
}

/** Upstream validateHTTPIngressPath: pathType required; Exact and Prefix paths absolute and without dot segments. */
function validatePath(p: JsonMap, path: string): Cause[] {
  const pathType = p.pathType;
  if (pathType === undefined || pathType === null) return [required(child(path, 'pathType'), 'pathType must be specified')];
  const out: Cause[] = [];
  const value = str(p.path) ?? '';
  const pp = child(path, 'path');
  if (pathType === 'Exact' || pathType === 'Prefix') {
    if (!value.startsWith('/')) out.push(invalid(pp, value, 'must be an absolute path'));
    for (const seq of INVALID_PATH_SEQUENCES) if (value.includes(seq)) out.push(invalid(pp, value, `must not contain '${seq}'`));
    for (const suffix of INVALID_PATH_SUFFIXES) if (value.endsWith(suffix)) out.push(invalid(pp, value, `cannot end with '${suffix}'`));
  } else if (pathType === 'ImplementationSpecific') {
    if (value && !value.startsWith('/')) out.push(invalid(pp, value, 'must be an absolute path'));
  } else {
    out.push(notSupported(child(path, 'pathType'), pathType, PATH_TYPES));
  }
  out.push(...validateBackend(rec(p.backend) ?? {}, child(path, 'backend')));
  return out;
}

/** Upstream validateIngressRuleValue / validateHTTPIngressRuleValue. */
function validateRuleValue(rule: JsonMap, path: string): Cause[] {
  const http = rec(rule.http);
  if (!http) return [];
  const paths = recs(http.paths);
  const hp = child(child(path, 'http'), 'paths');
  const out: Cause[] = paths.length === 0 ? [required(hp)] : [];
  paths.forEach((p, i) => out.push(...validatePath(p, index(hp, i))));
  return out;
}

/** Upstream validateIngressRules: a DNS name (not an IP) or a wildcard host, and the rule's paths. */
function validateRules(rules: JsonMap[], path: string, opts: Options): Cause[] {
  const out: Cause[] = [];
  rules.forEach((rule, i) => {
    const rp = index(path, i);
    const host = str(rule.host) ?? '';
    const wildcard = host.includes('*');
    if (host) {
      if (isIP(host)) out.push(invalid(child(rp, 'host'), host, 'must be a DNS name, not an IP address'));
      out.push(...messages(child(rp, 'host'), host, wildcard ? wildcardDns1123SubdomainErrors(host) : dns1123SubdomainErrors(host)));
    }
    if (!(host && wildcard) || !opts.allowInvalidWildcardHostRule) out.push(...validateRuleValue(rule, rp));
  });
  return out;
}

/** Upstream validateIngressTLS: hosts are DNS names or wildcards; a secret name, when given, a DNS subdomain. */
function validateTls(tls: JsonMap[], path: string, opts: Options): Cause[] {
  const out: Cause[] = [];
  tls.forEach((t, i) => {
    const tp = index(path, i);
    strs(t.hosts).forEach((h, j) => out.push(...messages(index(child(tp, 'hosts'), j), h, h.includes('*') ? wildcardDns1123SubdomainErrors(h) : dns1123SubdomainErrors(h))));
    const secret = str(t.secretName) ?? '';
    if (secret && !opts.allowInvalidSecretName) out.push(...messages(child(tp, 'secretName'), secret, dns1123SubdomainErrors(secret)));
  });
  return out;
}

/** Upstream ValidateIngressSpec. */
export function validateIngressSpec(spec: JsonMap, opts: Options): Cause[] {
  const out: Cause[] = [];
  const rules = recs(spec.rules);
  const backend = rec(spec.defaultBackend);
  if (rules.length === 0 && !backend) {
    // Upstream prints the empty rules as Go's %#v of its internal type: (nil) when absent, {} when [].
    const shown = Array.isArray(spec.rules) ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)';
    out.push(fieldError('spec', `Invalid value: ${shown}: either \`defaultBackend\` or \`rules\` must be specified`, 'FieldValueInvalid'));
  }
  if (backend) out.push(...validateBackend(backend, 'spec.defaultBackend'));
  if (rules.length) out.push(...validateRules(rules, 'spec.rules', opts));
  const tls = recs(spec.tls);
  if (tls.length) out.push(...validateTls(tls, 'spec.tls', opts));
  const className = str(spec.ingressClassName);
  if (className !== undefined) out.push(...messages('spec.ingressClassName', className, dns1123SubdomainErrors(className)));
  return out;
}

/** Upstream ValidateIngressLoadBalancerStatus (the /status sub-resource). */
function validateStatus(o: KObject): Cause[] {
  const out: Cause[] = [];
  recs(rec(rec(o.status)?.loadBalancer)?.ingress).forEach((p, i) => {
    const ip = index('status.loadBalancer.ingress', i);
    const addr = str(p.ip) ?? '';
    if (addr && !isIP(addr)) out.push(invalid(child(ip, 'ip'), addr, 'must be a valid IP address'));
    const hostname = str(p.hostname) ?? '';
    if (hostname) {
      out.push(...messages(child(ip, 'hostname'), hostname, dns1123SubdomainErrors(hostname)));
      if (isIP(hostname)) out.push(invalid(child(ip, 'hostname'), hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return out;
}

/** Upstream allowInvalidSecretName / allowInvalidWildcardHostRule: what the stored object already has stays allowed. */
function updateOptions(old: KObject): Options {
  const spec = rec(old.spec) ?? {};
  const allowInvalidSecretName = recs(spec.tls).some((t) => {
    const secret = str(t.secretName) ?? '';
    return secret !== '' && dns1123SubdomainErrors(secret).length > 0;
  });
  const allowInvalidWildcardHostRule = recs(spec.rules).some((r, i) => (str(r.host) ?? '').includes('*') && validateRuleValue(r, index('spec.rules', i)).length > 0);
  return { allowInvalidSecretName, allowInvalidWildcardHostRule };
}

/** Upstream ValidateIngressCreate / ValidateIngressUpdate / ValidateIngressStatusUpdate. */
export function validateIngress(o: KObject, old?: KObject, subresource?: string): Cause[] {
  if (subresource === 'status') return validateStatus(o);
  const spec = rec(o.spec) ?? {};
  const opts = old ? updateOptions(old) : { allowInvalidSecretName: false, allowInvalidWildcardHostRule: false };
  const out = validateIngressSpec(spec, opts);
  if (!old && spec.ingressClassName !== undefined && spec.ingressClassName !== null) {
    const annotations = o.metadata.annotations ?? {};
    const key = CLASS_ANNOTATION_KEYS.find((k) => annotations[k] !== undefined);
    // Upstream's path for this cause is "annotations.kubernetes.io/ingress.class" (no metadata prefix).
    if (key) out.push(invalid(child('annotations', key), annotations[key], 'can not be set when the class field is also set'));
  }
  return out;
}
