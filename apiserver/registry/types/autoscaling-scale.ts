import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { nonNegative } from '../common-validation';
import { rec } from '../obj-access';
import type { ResourceType } from '../resource-type';
import { described, int32, obj, ptr, str } from '../schema-builders';

/**
 * autoscaling/v1 Scale: the body of every {resource}/scale sub-resource (handlers/scale.ts). It is
 * not stored: the handler builds it from the scaled object and writes spec.replicas back.
 */

const AUTOSCALING = 'k8s.io.api.autoscaling.v1';

export const scaleSchema = withMeta(`${AUTOSCALING}.Scale`, {
  spec: [
    2,
    described('spec defines the behavior of the scale.', obj(`${AUTOSCALING}.ScaleSpec`, {
      replicas: [1, int32('replicas is the desired number of instances for the scaled object.')],
    })),
  ],
  status: [
    3,
    described('status is the current status of the scale. Read-only.', obj(`${AUTOSCALING}.ScaleStatus`, {
      replicas: [1, ptr(int32('replicas is the actual number of observed instances of the scaled object.'))],
      selector: [2, str('selector is the label query over pods that should match the replicas count, in the query-parameter syntax of label selectors.')],
    })),
  ],
});

/** Upstream ValidateScale: the desired replicas may not be negative. */
export function validateScale(o: KObject): Cause[] {
  return nonNegative('spec.replicas', rec(o.spec)?.replicas);
}

/**
 * The Scale kind as the codec, field validation and replies see it (never registered: the
 * sub-resource handler decodes request bodies and encodes answers with it).
 */
export const scaleType: ResourceType = {
  group: 'autoscaling',
  version: 'v1',
  resource: 'scale',
  singular: 'scale',
  kind: 'Scale',
  listKind: 'ScaleList',
  namespaced: true,
  schema: scaleSchema,
  hasStatus: false,
  validate: validateScale,
};
