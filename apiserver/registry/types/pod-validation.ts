import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { messages, nonNegative, protocol, resourceList } from '../common-validation';
import { child, duplicate, forbidden, index, invalid, key, notFound, notSupported, required } from '../field-errors';
import { validateLabels } from '../meta-validation';
import {
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  envVarNameErrors,
  inclusiveRangeError,
  ipErrors,
  labelValueErrors,
  portNameErrors,
  portNumErrors,
  qualifiedNameErrors,
} from '../../api/name-validation';
import { get, rec, recs, str, strAt, type JsonMap } from '../obj-access';
import { compareQuantities, parseQuantity } from '../quantity';
import { TAINT_EFFECTS } from './nodes';
import { DNS_POLICIES, PULL_POLICIES, RESTART_POLICIES, VOLUME_SOURCES } from './pod-schema';

/** Pod validation as upstream's ValidatePodCreate / ValidatePodSpec (the commonly hit rules). */

const ENV_SOURCES = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef'];
const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];

function label(path: string, v: string): Cause[] {
  return messages(path, v, dns1123LabelErrors(v));
}

function validateVolumes(volumes: JsonMap[], path: string): { causes: Cause[]; names: Set<string> } {
  const out: Cause[] = [];
  const names = new Set<string>();
  volumes.forEach((v, i) => {
    const p = index(path, i);
    const set = VOLUME_SOURCES.filter((k) => v[k] !== undefined && v[k] !== null);
    set.slice(1).forEach((k) => out.push(forbidden(child(p, k), 'may not specify more than 1 volume type')));
    if (set.length === 0) out.push(required(p, 'must specify a volume type'));
    const name = strAt(v, 'name');
    if (!name) out.push(required(child(p, 'name')));
    else out.push(...label(child(p, 'name'), name));
    if (names.has(name)) out.push(duplicate(child(p, 'name'), name));
    names.add(name);
  });
  return { causes: out, names };
}

function validatePorts(ports: JsonMap[], path: string, hostPorts: Set<string>): Cause[] {
  const out: Cause[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const p = index(path, i);
    const name = strAt(port, 'name');
    if (name) {
      const errs = portNameErrors(name);
      if (errs.length) out.push(...messages(child(p, 'name'), name, errs));
      else if (names.has(name)) out.push(duplicate(child(p, 'name'), name));
      else names.add(name);
    }
    const cp = port.containerPort;
    if (cp === undefined || cp === null || cp === 0) out.push(required(child(p, 'containerPort')));
    else if (typeof cp === 'number') out.push(...messages(child(p, 'containerPort'), cp, portNumErrors(cp)));
    const hp = port.hostPort;
    if (typeof hp === 'number' && hp !== 0) {
      out.push(...messages(child(p, 'hostPort'), hp, portNumErrors(hp)));
      // Upstream AccumulateUniqueHostPorts: one host port per IP/protocol in the whole pod.
      const k = `${strAt(port, 'hostIP')}/${strAt(port, 'protocol')}/${hp}`;
      if (hostPorts.has(k)) out.push(duplicate(child(p, 'hostPort'), k));
      hostPorts.add(k);
    }
    out.push(...protocol(child(p, 'protocol'), port.protocol));
  });
  return out;
}

function validateEnv(env: JsonMap[], path: string): Cause[] {
  const out: Cause[] = [];
  env.forEach((e, i) => {
    const p = index(path, i);
    const name = strAt(e, 'name');
    if (!name) out.push(required(child(p, 'name')));
    else out.push(...messages(child(p, 'name'), name, envVarNameErrors(name)));
    const from = rec(e.valueFrom);
    if (from) {
      const fp = child(p, 'valueFrom');
      const n = ENV_SOURCES.filter((k) => from[k] !== undefined && from[k] !== null).length;
      if (n === 0) out.push(invalid(fp, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
      else if (n > 1) out.push(invalid(fp, '', 'may not have more than one field specified at a time'));
      if (strAt(e, 'value')) out.push(invalid(fp, '', 'may not be specified when `value` is not empty'));
    }
  });
  return out;
}

function validateMounts(mounts: JsonMap[], path: string, volumes: Set<string>): Cause[] {
  const out: Cause[] = [];
  const points = new Set<string>();
  mounts.forEach((m, i) => {
    const p = index(path, i);
    const name = strAt(m, 'name');
    if (!name) out.push(required(child(p, 'name')));
    if (!volumes.has(name)) out.push(notFound(child(p, 'name'), name));
    const mp = strAt(m, 'mountPath');
    if (!mp) out.push(required(child(p, 'mountPath')));
    if (points.has(mp)) out.push(invalid(child(p, 'mountPath'), mp, 'must be unique'));
    points.add(mp);
    const sub = strAt(m, 'subPath');
    if (sub && (sub.startsWith('/') || sub.split('/').includes('..'))) {
      out.push(invalid(child(p, 'subPath'), sub, sub.startsWith('/') ? 'must be a relative path' : "must not contain '..'"));
    }
  });
  return out;
}

function validateProbe(probe: unknown, path: string): Cause[] {
  const p = rec(probe);
  if (!p) return [];
  const out: Cause[] = [];
  const handlers = PROBE_HANDLERS.filter((k) => p[k] !== undefined && p[k] !== null);
  if (handlers.length === 0) out.push(required(path, 'must specify a handler type'));
  handlers.slice(1).forEach((k) => out.push(forbidden(child(path, k), 'may not specify more than 1 handler type')));
  for (const f of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    out.push(...nonNegative(child(path, f), p[f]));
  }
  return out;
}

function validateResources(c: JsonMap, path: string): Cause[] {
  const out: Cause[] = [];
  const limits = rec(get(c, 'resources', 'limits')) ?? {};
  const requests = rec(get(c, 'resources', 'requests')) ?? {};
  out.push(...resourceList(child(path, 'limits'), limits));
  out.push(...resourceList(child(path, 'requests'), requests));
  for (const [name, v] of Object.entries(requests)) {
    const lim = limits[name];
    const rq = typeof v === 'string' || typeof v === 'number' ? parseQuantity(v) : undefined;
    const lq = typeof lim === 'string' || typeof lim === 'number' ? parseQuantity(lim) : undefined;
    if (rq && lq && compareQuantities(rq, lq) > 0) {
      out.push(invalid(key(child(path, 'requests'), name), v, `must be less than or equal to ${name} limit of ${String(lim)}`));
    }
  }
  return out;
}

type ContainerKind = 'container' | 'init' | 'ephemeral';

function validateContainer(c: JsonMap, p: string, kind: ContainerKind, volumes: Set<string>, names: Set<string>, hostPorts: Set<string>): Cause[] {
  const out: Cause[] = [];
  const name = strAt(c, 'name');
  if (!name) out.push(required(child(p, 'name')));
  else out.push(...label(child(p, 'name'), name));
  if (name && names.has(name)) out.push(duplicate(child(p, 'name'), name));
  names.add(name);
  const image = strAt(c, 'image');
  if (!image) out.push(required(child(p, 'image')));
  else if (image.trim() !== image) out.push(invalid(child(p, 'image'), image, 'must not have leading or trailing whitespace'));
  const pull = c.imagePullPolicy;
  if (!pull) out.push(required(child(p, 'imagePullPolicy')));
  else if (typeof pull !== 'string' || !PULL_POLICIES.includes(pull)) out.push(notSupported(child(p, 'imagePullPolicy'), pull, [...PULL_POLICIES].sort()));
  const tmp = c.terminationMessagePolicy;
  if (!tmp) out.push(required(child(p, 'terminationMessagePolicy'), "must be 'File' or 'FallbackToLogsOnError'"));
  else if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    out.push(invalid(child(p, 'terminationMessagePolicy'), tmp, "must be 'File' or 'FallbackToLogsOnError'"));
  }
  const rp = str(c.restartPolicy);
  if (rp) {
    if (kind === 'container') out.push(forbidden(child(p, 'restartPolicy'), 'may not be set for non-init containers'));
    else if (kind === 'init' && rp !== 'Always') out.push(notSupported(child(p, 'restartPolicy'), rp, ['Always']));
  }
  out.push(...validatePorts(recs(c.ports), child(p, 'ports'), hostPorts));
  out.push(...validateEnv(recs(c.env), child(p, 'env')));
  out.push(...validateMounts(recs(c.volumeMounts), child(p, 'volumeMounts'), volumes));
  out.push(...validateResources(c, child(p, 'resources')));
  const sidecar = kind === 'init' && rp === 'Always';
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    if (c[probe] === undefined || c[probe] === null) continue;
    if ((kind === 'init' && !sidecar) || kind === 'ephemeral') {
      out.push(forbidden(child(p, probe), kind === 'init' ? 'may not be set for init containers without restartPolicy=Always' : 'cannot be set for an Ephemeral Container'));
    } else out.push(...validateProbe(c[probe], child(p, probe)));
  }
  return out;
}

/** Upstream ValidateTolerations (pod specs and RuntimeClass scheduling alike). */
export function validateTolerations(tolerations: JsonMap[], path: string): Cause[] {
  const out: Cause[] = [];
  tolerations.forEach((t, i) => {
    const p = index(path, i);
    const k = strAt(t, 'key');
    const op = strAt(t, 'operator');
    const value = strAt(t, 'value');
    const effect = strAt(t, 'effect');
    if (k) out.push(...messages(child(p, 'key'), k, qualifiedNameErrors(k)));
    if (!k && op !== 'Exists') {
      out.push(invalid(child(p, 'operator'), op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute') {
      out.push(invalid(child(p, 'effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (op === 'Equal' || op === '') {
      const errs = labelValueErrors(value);
      if (errs.length) out.push(invalid(child(p, 'operator'), value, errs.join(';')));
    } else if (op === 'Exists') {
      if (value) out.push(invalid(child(p, 'operator'), t, "value must be empty when `operator` is 'Exists'"));
    } else out.push(notSupported(child(p, 'operator'), op, ['Equal', 'Exists']));
    if (effect && !TAINT_EFFECTS.includes(effect)) out.push(notSupported(child(p, 'effect'), effect, TAINT_EFFECTS));
  });
  return out;
}

/** ValidatePodSpec under path ("spec"). */
export function validatePodSpec(spec: JsonMap, path: string): Cause[] {
  const out: Cause[] = [];
  const vols = validateVolumes(recs(spec.volumes), child(path, 'volumes'));
  out.push(...vols.causes);
  const names = new Set<string>();
  const hostPorts = new Set<string>();
  const containers = recs(spec.containers);
  if (containers.length === 0) out.push(required(child(path, 'containers')));
  recs(spec.initContainers).forEach((c, i) =>
    out.push(...validateContainer(c, index(child(path, 'initContainers'), i), 'init', vols.names, names, hostPorts)),
  );
  containers.forEach((c, i) => out.push(...validateContainer(c, index(child(path, 'containers'), i), 'container', vols.names, names, hostPorts)));
  recs(spec.ephemeralContainers).forEach((c, i) =>
    out.push(...validateContainer(c, index(child(path, 'ephemeralContainers'), i), 'ephemeral', vols.names, names, hostPorts)),
  );
  const rp = spec.restartPolicy;
  if (!rp) out.push(required(child(path, 'restartPolicy')));
  else if (typeof rp !== 'string' || !RESTART_POLICIES.includes(rp)) out.push(notSupported(child(path, 'restartPolicy'), rp, RESTART_POLICIES));
  const dp = spec.dnsPolicy;
  if (!dp) out.push(required(child(path, 'dnsPolicy')));
  else if (typeof dp !== 'string' || !DNS_POLICIES.includes(dp)) out.push(notSupported(child(path, 'dnsPolicy'), dp, DNS_POLICIES));
  else if (dp === 'None' && !rec(spec.dnsConfig)) out.push(required(child(path, 'dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'));
  out.push(...validateLabels(spec.nodeSelector, child(path, 'nodeSelector')));
  for (const f of ['serviceAccountName', 'nodeName']) {
    const v = strAt(spec, f);
    if (v) out.push(...messages(child(path, f), v, dns1123SubdomainErrors(v)));
  }
  for (const f of ['hostname', 'subdomain']) {
    const v = strAt(spec, f);
    if (v) out.push(...label(child(path, f), v));
  }
  const ads = spec.activeDeadlineSeconds;
  if (typeof ads === 'number' && (ads < 1 || ads > 4294967295)) {
    out.push(invalid(child(path, 'activeDeadlineSeconds'), ads, inclusiveRangeError(1, 4294967295)));
  }
  out.push(...validateTolerations(recs(spec.tolerations), child(path, 'tolerations')));
  recs(spec.readinessGates).forEach((g, i) => {
    const ct = strAt(g, 'conditionType');
    out.push(...messages(child(index(child(path, 'readinessGates'), i), 'conditionType'), ct, qualifiedNameErrors(ct)));
  });
  return out;
}

/** The pod's own rules; create-only rules apply when old is absent. */
export function validatePod(o: KObject, old?: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out = validatePodSpec(spec, 'spec');
  if (!old) {
    if (recs(spec.ephemeralContainers).length > 0) out.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
    if (strAt(spec, 'nodeName') && recs(spec.schedulingGates).length > 0) {
      out.push(forbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
    }
  }
  const podIP = strAt(o, 'status', 'podIP');
  if (podIP) out.push(...messages('status.podIP', podIP, ipErrors(podIP)));
  recs(get(o, 'status', 'podIPs')).forEach((x, i) => {
    const v = strAt(x, 'ip');
    out.push(...messages(child(index('status.podIPs', i), 'ip'), v, ipErrors(v)));
  });
  const nominated = strAt(o, 'status', 'nominatedNodeName');
  if (nominated) out.push(...messages('status.nominatedNodeName', nominated, dns1123SubdomainErrors(nominated)));
  return out;
}
