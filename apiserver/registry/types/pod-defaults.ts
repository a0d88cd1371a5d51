import type { KObject } from '../../api/types';
import { isMirrorPod } from '../../api/well-known';
import { ensureRec, get, rec, recs, setDefault, str } from '../obj-access';
import { compareQuantities, parseQuantity } from '../quantity';
import { canonicalizeQuantities } from '../canonical-quantities';
import { podSchema, VOLUME_SOURCES } from './pod-schema';

/**
 * Pod defaulting as upstream's v1 SetDefaults_Pod / PodSpec / Container / Probe / Volume, plus the
 * values admission plugins add upstream that clients expect on every pod (serviceAccountName
 * "default" from the ServiceAccount plugin except on mirror pods, priority 0 and preemptionPolicy from the Priority plugin).
 */

export const DEFAULT_SCHEDULER = 'default-scheduler';
export const DEFAULT_TERMINATION_GRACE_PERIOD = 30;
export const TERMINATION_MESSAGE_PATH = '/dev/termination-log';

/** Upstream parsers.ParseImageName's tag: "latest" when neither tag nor digest is given. */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const named = at >= 0 ? image.slice(0, at) : image;
  const slash = named.lastIndexOf('/');
  const colon = named.lastIndexOf(':');
  const tag = colon > slash ? named.slice(colon + 1) : '';
  if (!tag && at < 0) return 'latest';
  return tag;
}

function defaultProbe(p: unknown): void {
  const probe = rec(p);
  if (!probe) return;
  setDefault(probe, 'timeoutSeconds', 1, false);
  setDefault(probe, 'periodSeconds', 10, false);
  setDefault(probe, 'successThreshold', 1, false);
  setDefault(probe, 'failureThreshold', 3, false);
  const http = rec(probe.httpGet);
  if (http) {
    setDefault(http, 'path', '/');
    setDefault(http, 'scheme', 'HTTP');
  }
}

export function defaultContainer(c: Record<string, unknown>, hostNetwork: boolean, requestsFromLimits: boolean): void {
  if (!c.imagePullPolicy) c.imagePullPolicy = imageTag(str(c.image) ?? '') === 'latest' ? 'Always' : 'IfNotPresent';
  setDefault(c, 'terminationMessagePath', TERMINATION_MESSAGE_PATH);
  setDefault(c, 'terminationMessagePolicy', 'File');
  for (const port of recs(c.ports)) {
    setDefault(port, 'protocol', 'TCP');
    // Upstream defaultHostNetworkPorts: with host networking the host port is the container port.
    if (hostNetwork && (port.hostPort === undefined || port.hostPort === null || port.hostPort === 0)) port.hostPort = port.containerPort;
  }
  for (const env of recs(c.env)) {
    const fieldRef = rec(get(env, 'valueFrom', 'fieldRef'));
    if (fieldRef) setDefault(fieldRef, 'apiVersion', 'v1');
    const resRef = rec(get(env, 'valueFrom', 'resourceFieldRef'));
    if (resRef) setDefault(resRef, 'divisor', '0');
  }
  const resources = ensureRec(c, 'resources');
  if (requestsFromLimits) {
    // Requests default to limits (SetDefaults_Pod), for regular and init containers only.
    const limits = rec(resources.limits);
    if (limits && Object.keys(limits).length) {
      const requests = ensureRec(resources, 'requests');
      for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v;
    }
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

export function defaultVolume(v: Record<string, unknown>): void {
  if (!VOLUME_SOURCES.some((k) => v[k] !== undefined && v[k] !== null)) v.emptyDir = {};
  for (const k of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = rec(v[k]);
    if (src) setDefault(src, 'defaultMode', 0o644, false);
  }
  const hostPath = rec(v.hostPath);
  if (hostPath) setDefault(hostPath, 'type', '', false);
}

/** Upstream qos.GetPodQOS over the (defaulted) containers. */
export function podQosClass(spec: Record<string, unknown>): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...recs(spec.containers), ...recs(spec.initContainers)];
  const supported = ['cpu', 'memory'];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const requests = rec(get(c, 'resources', 'requests')) ?? {};
    const limits = rec(get(c, 'resources', 'limits')) ?? {};
    for (const r of supported) {
      const req = parseQ(requests[r]);
      const lim = parseQ(limits[r]);
      if ((req && req.mantissa !== 0n) || (lim && lim.mantissa !== 0n)) any = true;
      if (!lim || lim.mantissa === 0n || !req || compareQuantities(req, lim) !== 0) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function parseQ(v: unknown) {
  return typeof v === 'string' || typeof v === 'number' ? parseQuantity(v) : undefined;
}

/** Fills pod defaults in place; idempotent. */
export function defaultPod(o: KObject): void {
  const spec = ensureRec(o, 'spec');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', DEFAULT_TERMINATION_GRACE_PERIOD, false);
  setDefault(spec, 'schedulerName', DEFAULT_SCHEDULER);
  setDefault(spec, 'securityContext', {}, false);
  setDefault(spec, 'enableServiceLinks', true, false);
  // The deprecated serviceAccount alias and serviceAccountName mirror each other (v1 conversion);
  // "default" is what the ServiceAccount admission plugin assigns upstream. That plugin skips
  // mirror pods, which run with no account at all (and NodeRestriction refuses one that names any).
  if (!spec.serviceAccountName && str(spec.serviceAccount)) spec.serviceAccountName = spec.serviceAccount;
  if (!isMirrorPod(o)) setDefault(spec, 'serviceAccountName', 'default');
  if (spec.serviceAccountName !== undefined) spec.serviceAccount = spec.serviceAccountName;
  if (!spec.priorityClassName) {
    setDefault(spec, 'priority', 0, false);
    setDefault(spec, 'preemptionPolicy', 'PreemptLowerPriority');
  }
  const hostNetwork = spec.hostNetwork === true;
  for (const c of recs(spec.containers)) defaultContainer(c, hostNetwork, true);
  for (const c of recs(spec.initContainers)) defaultContainer(c, hostNetwork, true);
  for (const c of recs(spec.ephemeralContainers)) defaultContainer(c, false, false);
  for (const v of recs(spec.volumes)) defaultVolume(v);
  canonicalizeQuantities(podSchema, o);
  const status = ensureRec(o, 'status');
  setDefault(status, 'phase', 'Pending');
  setDefault(status, 'qosClass', podQosClass(spec));
}
