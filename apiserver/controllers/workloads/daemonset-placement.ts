import { sameKey } from '../../api/group-names';
import type { KObject } from '../../api/types';
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
} from '../../api/well-known';
import { TEMPLATE_GENERATION_ANNOTATION } from '../../registry/types/daemonsets';
import { ensureRec, get, rec, recs, str, strs, type JsonMap } from '../../registry/obj-access';
import { matchesNodeAffinity } from '../../scheduler/node-affinity';
import { firstUntolerated, nodeTaints, podTolerations } from '../../scheduler/taints';
import { REVISION_HASH_LABEL } from './history';

/**
 * Where a DaemonSet's pods belong (upstream pkg/controller/daemon/util and NodeShouldRunDaemonPod).
 * As upstream since 1.12 the controller does not bind pods itself: each pod gets a required node
 * affinity on metadata.name (matchFields) naming its node, and the default scheduler binds it.
 */

/** Upstream's pod-template-generation label (extensions DaemonSetTemplateGenerationKey), kept for pods made by older revisions' logic. */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

/**
 * Upstream AddOrUpdateDaemonPodTolerations: daemon pods stay on nodes that are not ready or
 * unreachable, and are placed on nodes under pressure and on cordoned ones; hostNetwork pods on
 * nodes whose network is unavailable too. svc's keys (node.svc.io/...); a toleration matches a
 * taint in either spelling.
 */
export function daemonTolerations(hostNetwork: boolean): JsonMap[] {
  const out: JsonMap[] = [
    { key: TAINT_NOT_READY, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_DISK_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_MEMORY_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_PID_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_UNSCHEDULABLE, operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (hostNetwork) out.push({ key: TAINT_NETWORK_UNAVAILABLE, operator: 'Exists', effect: 'NoSchedule' });
  return out;
}

/**
 * Upstream AddOrUpdateTolerationInPodSpec for each daemon toleration: one the spec has with the
 * same key (either spelling), operator, value and effect is replaced (its tolerationSeconds
 * dropped), otherwise it is added.
 */
export function addDaemonTolerations(spec: JsonMap): void {
  let tolerations = recs(spec.tolerations);
  for (const want of daemonTolerations(spec.hostNetwork === true)) {
    const same = (t: JsonMap) => sameKey(str(t.key) ?? '', str(want.key) ?? '') && (str(t.operator) ?? 'Equal') === want.operator && (str(t.value) ?? '') === '' && str(t.effect) === want.effect;
    if (tolerations.some(same)) tolerations = tolerations.map((t) => (same(t) ? { ...want } : t));
    else tolerations = [...tolerations, { ...want }];
  }
  spec.tolerations = tolerations;
}

/** The DaemonSet's template generation (the annotation), undefined when unreadable. */
export function templateGeneration(ds: KObject): number | undefined {
  const v = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  return v !== undefined && /^[0-9]+$/.test(v) ? Number(v) : undefined;
}

/** Upstream CreatePodTemplate: the template with the daemon tolerations and the generation and hash labels. */
export function daemonPodTemplate(ds: KObject, hash: string): JsonMap {
  const template = structuredClone(rec(get(ds, 'spec', 'template')) ?? {});
  addDaemonTolerations(ensureRec(template, 'spec'));
  const labels = ensureRec(ensureRec(template, 'metadata'), 'labels');
  const generation = templateGeneration(ds);
  if (generation !== undefined) labels[TEMPLATE_GENERATION_LABEL] = String(generation);
  labels[REVISION_HASH_LABEL] = hash;
  return template;
}

/** Upstream ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes one term, metadata.name In [node]. */
export function pinToNode(spec: JsonMap, node: string): void {
  const nodeAffinity = ensureRec(ensureRec(spec, 'affinity'), 'nodeAffinity');
  const required = ensureRec(nodeAffinity, 'requiredDuringSchedulingIgnoredDuringExecution');
  required.nodeSelectorTerms = [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }];
}

/** Upstream GetTargetNodeName: spec.nodeName, else the node a required matchFields metadata.name In term names; undefined for neither. */
export function targetNodeName(pod: KObject): string | undefined {
  const nodeName = str(get(pod, 'spec', 'nodeName'));
  if (nodeName) return nodeName;
  const terms = recs(get(pod, 'spec', 'affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms'));
  for (const term of terms) {
    for (const f of recs(term.matchFields)) {
      if (str(f.key) === 'metadata.name' && str(f.operator) === 'In') {
        const values = strs(f.values);
        return values.length === 1 ? values[0] : undefined;
      }
    }
  }
  return undefined;
}

/**
 * Upstream NodeShouldRunDaemonPod: whether a daemon pod should be made on the node (the
 * template's nodeName, nodeSelector and required node affinity fit, and every NoSchedule and
 * NoExecute taint is tolerated, counting the daemon tolerations), and whether one already there may
 * stay (it fits, and every NoExecute taint is tolerated).
 */
export function shouldRunOn(node: KObject, ds: KObject): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const spec = structuredClone(rec(get(ds, 'spec', 'template', 'spec')) ?? {});
  const wanted = str(spec.nodeName);
  if (wanted && wanted !== node.metadata.name) return { shouldRun: false, shouldContinueRunning: false };
  addDaemonTolerations(spec);
  const pod: KObject = { metadata: {}, spec };
  if (!matchesNodeAffinity(pod, node)) return { shouldRun: false, shouldContinueRunning: false };
  const taints = nodeTaints(node);
  const tolerations = podTolerations(pod);
  if (!firstUntolerated(taints, tolerations, ['NoSchedule', 'NoExecute'])) return { shouldRun: true, shouldContinueRunning: true };
  return { shouldRun: false, shouldContinueRunning: !firstUntolerated(taints, tolerations, ['NoExecute']) };
}
