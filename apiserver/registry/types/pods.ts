import type { KObject } from '../../api/types';
import { get, recs, strAt } from '../obj-access';
import type { DeletionStrategy, ResourceType } from '../resource-type';
import type { Now } from '../table';
import { defaultPod } from './pod-defaults';
import { podSchema } from './pod-schema';
import { podColumns } from './pod-table';
import { validatePodUpdate } from './pod-update';
import { validatePod } from './pod-validation';

/** core/v1 Pod. Schema, defaults, validation and table live in the pod-*.ts files. */

/** Upstream pod ToSelectableFields; unset fields read as '' so `spec.nodeName=` selects unscheduled pods. */
export const podFieldSelectors: Readonly<Record<string, (o: KObject) => string>> = {
  'spec.nodeName': (o) => strAt(o, 'spec', 'nodeName'),
  'spec.restartPolicy': (o) => strAt(o, 'spec', 'restartPolicy'),
  'spec.schedulerName': (o) => strAt(o, 'spec', 'schedulerName'),
  'spec.serviceAccountName': (o) => strAt(o, 'spec', 'serviceAccountName'),
  'spec.hostNetwork': (o) => String(get(o, 'spec', 'hostNetwork') === true),
  'status.phase': (o) => strAt(o, 'status', 'phase'),
  'status.podIP': (o) => strAt(recs(get(o, 'status', 'podIPs'))[0], 'ip') || strAt(o, 'status', 'podIP'),
  'status.nominatedNodeName': (o) => strAt(o, 'status', 'nominatedNodeName'),
};

/** Upstream's pod CheckGracefulDelete (unscheduled or finished pods go at once; others get their spec's grace period) and ShouldDeleteDuringUpdate. */
export const podDeletion: DeletionStrategy = {
  defaultGracePeriodSeconds(o) {
    const spec = (o.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
    const phase = (o.status as { phase?: string } | undefined)?.phase;
    if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    return spec.terminationGracePeriodSeconds ?? 30;
  },
  // Upstream ShouldDeleteDuringUpdate: a pod whose last finalizer is removed while it is still in
  // its graceful termination stays until the node agent's final delete (grace period 0).
  deleteWhenFinalized: (o) => (o.metadata.deletionGracePeriodSeconds ?? 0) === 0,
};

export function makePodType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'pods',
    singular: 'pod',
    kind: 'Pod',
    listKind: 'PodList',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    schema: podSchema,
    hasStatus: true,
    // pods/binding sets spec.nodeName and the PodScheduled condition in one write (upstream's BindingREST).
    subresourceWrites: { binding: 'whole' },
    specFields: ['spec'],
    fieldSelectors: podFieldSelectors,
    tableColumns: podColumns(now),
    defaults: defaultPod,
    validate: validatePod,
    validateUpdate: validatePodUpdate,
    deletion: podDeletion,
  };
}

export const podType: ResourceType = makePodType();

