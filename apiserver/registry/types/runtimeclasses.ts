import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { dns1123LabelErrors } from '../../api/name-validation';
import { withMeta } from '../common-schemas';
import { messages, resourceList } from '../common-validation';
import { duplicate, immutable, index } from '../field-errors';
import { validateLabels } from '../meta-validation';
import { get, rec, recs, str } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { atomicList, described, obj, quantityMap, str as s, strMap } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';
import { tolerationSchema } from './affinity-schema';
import { validateTolerations } from './pod-validation';

/**
 * node.svc.io/v1 RuntimeClass (node.k8s.io/v1 for stock clients): the CRI handler a pod's sandbox
 * runs with, the overhead the RuntimeClass admission plugin adds to the pod, and scheduling
 * constraints merged into the pod. Wire contract: upstream's k8s.io.api.node.v1 messages and numbers.
 */

const V1 = 'k8s.io.api.node.v1';

export const runtimeClassSchema = withMeta(
  `${V1}.RuntimeClass`,
  {
    handler: [2, s('The CRI handler (runtime configuration) pods of this class run with; a DNS label, immutable.')],
    overhead: [
      3,
      described(
        'The resources a pod of this class uses beyond its containers; added to the pod at admission.',
        obj(`${V1}.Overhead`, { podFixed: [1, quantityMap('The fixed resource overhead of running a pod.')] }),
      ),
    ],
    scheduling: [
      4,
      described(
        'Where pods of this class may run: merged into their nodeSelector and tolerations at admission.',
        obj(`${V1}.Scheduling`, {
          nodeSelector: [1, strMap('Labels a node must have to run pods of this class.')],
          tolerations: [2, atomicList(tolerationSchema, 'Tolerations appended to the pods of this class.')],
        }),
      ),
    ],
  },
  { required: ['handler'] },
);

/** Upstream ValidateRuntimeClass (metadata is validated generically before). */
function validate(o: KObject): Cause[] {
  const out: Cause[] = [];
  const handler = str(o.handler) ?? '';
  out.push(...messages('handler', handler, dns1123LabelErrors(handler)));
  out.push(...resourceList('overhead.podFixed', get(o, 'overhead', 'podFixed')));
  const sched = rec(o.scheduling);
  if (sched) {
    out.push(...validateLabels(sched.nodeSelector, 'scheduling.nodeSelector'));
    const tolerations = recs(sched.tolerations);
    out.push(...validateTolerations(tolerations, 'scheduling.tolerations'));
    // As upstream: tolerations are unique by key, operator, value and effect.
    const seen = new Set<string>();
    tolerations.forEach((t, i) => {
      const k = JSON.stringify([t.key ?? '', t.operator ?? '', t.value ?? '', t.effect ?? '']);
      if (seen.has(k)) out.push(duplicate(index('scheduling.tolerations', i), t));
      seen.add(k);
    });
  }
  return out;
}

/** Upstream ValidateRuntimeClassUpdate: the handler never changes. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  return o.handler === old.handler ? [] : [immutable('handler', o.handler ?? null)];
}

export function makeRuntimeClassType(now: Now = Date.now): ResourceType {
  return {
    group: 'node.svc.io',
    version: 'v1',
    resource: 'runtimeclasses',
    singular: 'runtimeclass',
    kind: 'RuntimeClass',
    listKind: 'RuntimeClassList',
    namespaced: false,
    schema: runtimeClassSchema,
    hasStatus: false,
    // kubectl get runtimeclasses: NAME, HANDLER, AGE (upstream's printer).
    tableColumns: [column('Handler', 'string', 'The CRI handler.', (o) => str(o.handler) ?? ''), ageColumn(now)],
    validate,
    validateUpdate,
  };
}
