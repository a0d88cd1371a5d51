import { labelSelectorSchema } from '../common-schemas';
import { atomicList, int32, int64, obj, ptr, str } from '../schema-builders';

/** core/v1 scheduling constraints: affinity, node selectors, topology spread, tolerations. */

const V1 = 'k8s.io.api.core.v1';

const nodeSelectorRequirementSchema = obj(
  `${V1}.NodeSelectorRequirement`,
  {
    key: [1, ptr(str('The label key the selector applies to.'))],
    operator: [2, ptr(str('In, NotIn, Exists, DoesNotExist, Gt or Lt.'))],
    values: [3, atomicList(str())],
  },
);

const nodeSelectorTermSchema = obj(
  `${V1}.NodeSelectorTerm`,
  {
    matchExpressions: [1, atomicList(nodeSelectorRequirementSchema, "Requirements on the node's labels.")],
    matchFields: [2, atomicList(nodeSelectorRequirementSchema, "Requirements on the node's fields.")],
  },
  { atomic: true },
);

/** A node selector: the terms are ORed (also a PersistentVolume's node affinity). */
export const nodeSelectorSchema = obj(`${V1}.NodeSelector`, { nodeSelectorTerms: [1, atomicList(nodeSelectorTermSchema)] }, { atomic: true });

const podAffinityTermSchema = obj(
  `${V1}.PodAffinityTerm`,
  {
    labelSelector: [1, labelSelectorSchema],
    namespaces: [2, atomicList(str())],
    topologyKey: [3, ptr(str())],
    namespaceSelector: [4, labelSelectorSchema],
    matchLabelKeys: [5, atomicList(str())],
    mismatchLabelKeys: [6, atomicList(str())],
  },
);

const weightedPodAffinityTermSchema = obj(
  `${V1}.WeightedPodAffinityTerm`,
  { weight: [1, ptr(int32('1-100.'))], podAffinityTerm: [2, podAffinityTermSchema] },
);

function podAffinity(message: string) {
  return obj(message, {
    requiredDuringSchedulingIgnoredDuringExecution: [1, atomicList(podAffinityTermSchema)],
    preferredDuringSchedulingIgnoredDuringExecution: [2, atomicList(weightedPodAffinityTermSchema)],
  });
}

export const affinitySchema = obj(`${V1}.Affinity`, {
  nodeAffinity: [
    1,
    obj(`${V1}.NodeAffinity`, {
      requiredDuringSchedulingIgnoredDuringExecution: [1, nodeSelectorSchema],
      preferredDuringSchedulingIgnoredDuringExecution: [
        2,
        atomicList(obj(`${V1}.PreferredSchedulingTerm`, { weight: [1, ptr(int32())], preference: [2, nodeSelectorTermSchema] })),
      ],
    }),
  ],
  podAffinity: [2, podAffinity(`${V1}.PodAffinity`)],
  podAntiAffinity: [3, podAffinity(`${V1}.PodAntiAffinity`)],
});

export const topologySpreadConstraintSchema = obj(
  `${V1}.TopologySpreadConstraint`,
  {
    maxSkew: [1, ptr(int32())],
    topologyKey: [2, ptr(str())],
    whenUnsatisfiable: [3, ptr(str('DoNotSchedule or ScheduleAnyway.'))],
    labelSelector: [4, labelSelectorSchema],
    minDomains: [5, ptr(int32())],
    nodeAffinityPolicy: [6, ptr(str())],
    nodeTaintsPolicy: [7, ptr(str())],
    matchLabelKeys: [8, atomicList(str())],
  },
  // The list-map keys of PodSpec.topologySpreadConstraints.
  { required: ['topologyKey', 'whenUnsatisfiable'] },
);

export const tolerationSchema = obj(`${V1}.Toleration`, {
  key: [1, str()],
  operator: [2, str('Exists or Equal (the default).')],
  value: [3, str()],
  effect: [4, str('NoSchedule, PreferNoSchedule or NoExecute; empty matches all.')],
  tolerationSeconds: [5, ptr(int64('How long a NoExecute toleration tolerates the taint.'))],
});
