import { labelSelectorSchema } from '../common-schemas';
import { atomicList, described, int32, int64, obj, ptr, str } from '../schema-builders';

/** core/v1 scheduling constraints: affinity, node selectors, topology spread, tolerations. */

const V1 = 'k8s.io.api.core.v1';

const nodeSelectorRequirementSchema = obj(
  `${V1}.NodeSelectorRequirement`,
  {
    key: [1, ptr(str('The label key the selector applies to.'))],
    operator: [2, ptr(str('In, NotIn, Exists, DoesNotExist, Gt or Lt.'))],
    values: [3, atomicList(str(), 'The values to compare with; empty for Exists and DoesNotExist, one integer for Gt and Lt.')],
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
export const nodeSelectorSchema = obj(
  `${V1}.NodeSelector`,
  { nodeSelectorTerms: [1, atomicList(nodeSelectorTermSchema, 'The terms, ORed; each term\'s requirements are ANDed.')] },
  { atomic: true },
);

const podAffinityTermSchema = obj(
  `${V1}.PodAffinityTerm`,
  {
    labelSelector: [1, described('Selects the pods this term is about.', labelSelectorSchema)],
    namespaces: [2, atomicList(str(), 'Namespaces the selected pods may be in; this pod\'s namespace when empty and no namespaceSelector.')],
    topologyKey: [3, ptr(str('The node label whose equal values make nodes one topology domain.'))],
    namespaceSelector: [4, described('Selects namespaces the pods may be in, in addition to namespaces.', labelSelectorSchema)],
    matchLabelKeys: [5, atomicList(str(), 'Label keys whose values on this pod are ANDed into labelSelector with In.')],
    mismatchLabelKeys: [6, atomicList(str(), 'Label keys whose values on this pod are ANDed into labelSelector with NotIn.')],
  },
);

const weightedPodAffinityTermSchema = obj(
  `${V1}.WeightedPodAffinityTerm`,
  {
    weight: [1, ptr(int32('1-100.'))],
    podAffinityTerm: [2, described('The term whose matching nodes get the weight.', podAffinityTermSchema)],
  },
);

function podAffinity(message: string, what: string) {
  return obj(message, {
    requiredDuringSchedulingIgnoredDuringExecution: [
      1,
      atomicList(podAffinityTermSchema, `Terms a node must meet to schedule the pod ${what}; all must be met.`),
    ],
    preferredDuringSchedulingIgnoredDuringExecution: [
      2,
      atomicList(weightedPodAffinityTermSchema, `Weighted terms the scheduler prefers for placing the pod ${what}.`),
    ],
  });
}

const preferredSchedulingTermSchema = obj(`${V1}.PreferredSchedulingTerm`, {
  weight: [1, ptr(int32('1-100, added to a node\'s score when it matches the preference.'))],
  preference: [2, described('The node selector term to match.', nodeSelectorTermSchema)],
});

const nodeAffinitySchema = obj(`${V1}.NodeAffinity`, {
  requiredDuringSchedulingIgnoredDuringExecution: [
    1,
    described('The nodes the pod may be scheduled to; not re-checked once it runs.', nodeSelectorSchema),
  ],
  preferredDuringSchedulingIgnoredDuringExecution: [
    2,
    atomicList(preferredSchedulingTermSchema, 'Weighted node preferences the scheduler favors.'),
  ],
});

export const affinitySchema = obj(`${V1}.Affinity`, {
  nodeAffinity: [1, described('Node affinity scheduling rules of the pod.', nodeAffinitySchema)],
  podAffinity: [2, described('Rules to co-locate the pod with other pods.', podAffinity(`${V1}.PodAffinity`, 'near the selected pods'))],
  podAntiAffinity: [3, described('Rules to keep the pod apart from other pods.', podAffinity(`${V1}.PodAntiAffinity`, 'away from the selected pods'))],
});

export const topologySpreadConstraintSchema = obj(
  `${V1}.TopologySpreadConstraint`,
  {
    maxSkew: [1, ptr(int32('The greatest allowed difference in matching pods between topology domains.'))],
    topologyKey: [2, ptr(str('The node label whose values define the topology domains.'))],
    whenUnsatisfiable: [3, ptr(str('DoNotSchedule or ScheduleAnyway.'))],
    labelSelector: [4, described('Selects the pods counted in each domain.', labelSelectorSchema)],
    minDomains: [5, ptr(int32('The least number of eligible domains; fewer count as zero-pod domains.'))],
    nodeAffinityPolicy: [6, ptr(str('Honor or Ignore: whether node affinity limits the domains counted.'))],
    nodeTaintsPolicy: [7, ptr(str('Honor or Ignore: whether node taints limit the domains counted.'))],
    matchLabelKeys: [8, atomicList(str(), 'Label keys whose values on this pod are ANDed into labelSelector.')],
  },
  // The list-map keys of PodSpec.topologySpreadConstraints.
  { required: ['topologyKey', 'whenUnsatisfiable'] },
);

export const tolerationSchema = obj(`${V1}.Toleration`, {
  key: [1, str('The taint key tolerated; empty with Exists matches all keys.')],
  operator: [2, str('Exists or Equal (the default).')],
  value: [3, str('The taint value matched; empty with Exists.')],
  effect: [4, str('NoSchedule, PreferNoSchedule or NoExecute; empty matches all.')],
  tolerationSeconds: [5, ptr(int64('How long a NoExecute toleration tolerates the taint.'))],
});
