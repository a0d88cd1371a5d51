import { labelSelectorSchema, withMeta } from '../common-schemas';
import { atomicList, described, int32, int64, mapList, obj, ptr, quantity, str, time } from '../schema-builders';

/**
 * autoscaling/v2 HorizontalPodAutoscaler and autoscaling/v1's, with upstream's messages and field
 * numbers (k8s.io/api/autoscaling/v{1,2}/generated.proto).
 */

const V2 = 'k8s.io.api.autoscaling.v2';
const V1 = 'k8s.io.api.autoscaling.v1';

export const METRIC_SOURCE_TYPES: readonly string[] = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
export const METRIC_TARGET_TYPES: readonly string[] = ['AverageValue', 'Utilization', 'Value'];
export const SCALING_POLICY_TYPES: readonly string[] = ['Pods', 'Percent'];
export const SELECT_POLICIES: readonly string[] = ['Disabled', 'Max', 'Min'];

function crossVersionRef(pkg: string) {
  return obj(`${pkg}.CrossVersionObjectReference`, {
    kind: [1, str('kind is the kind of the referent.')],
    name: [2, str('name is the name of the referent.')],
    apiVersion: [3, str('apiVersion is the API version of the referent.')],
  }, { required: ['kind', 'name'], atomic: true });
}

const metricTarget = obj(`${V2}.MetricTarget`, {
  type: [1, str('type represents whether the metric type is Utilization, Value, or AverageValue.')],
  value: [2, quantity('value is the target value of the metric (as a quantity).')],
  averageValue: [3, quantity('averageValue is the target value of the average of the metric across all relevant pods (as a quantity).')],
  averageUtilization: [4, ptr(int32('averageUtilization is the target value of the average of the resource metric across all relevant pods, as a percentage of the requested value of the resource for the pods.'))],
}, { required: ['type'] });

const metricValueStatus = obj(`${V2}.MetricValueStatus`, {
  value: [1, quantity('value is the current value of the metric (as a quantity).')],
  averageValue: [2, quantity('averageValue is the current value of the average of the metric across all relevant pods (as a quantity).')],
  averageUtilization: [3, ptr(int32('currentAverageUtilization is the current value of the average of the resource metric across all relevant pods, as a percentage of the requested value of the resource for the pods.'))],
});

const metricIdentifier = obj(`${V2}.MetricIdentifier`, {
  name: [1, str('name is the name of the given metric.')],
  selector: [2, described('selector is the label selector for the given metric, passed to the metrics server for more specific scoping.', labelSelectorSchema)],
}, { required: ['name'] });

const ref = crossVersionRef(V2);

const target = () => described('target specifies the target value for the given metric.', metricTarget);
const current = () => described('current contains the current value for the given metric.', metricValueStatus);
const metricId = () => described('metric identifies the target metric by name and selector.', metricIdentifier);
const describedObject = () => described('describedObject specifies the descriptions of a object, such as kind, name and apiVersion.', ref);

const metricSpec = obj(`${V2}.MetricSpec`, {
  type: [1, str('type is the type of metric source: ContainerResource, External, Object, Pods or Resource.')],
  object: [2, described('object refers to a metric describing a single kubernetes object.', obj(`${V2}.ObjectMetricSource`, { describedObject: [1, describedObject()], target: [2, target()], metric: [3, metricId()] }, { required: ['describedObject', 'target', 'metric'] }))],
  pods: [3, described('pods refers to a metric describing each pod in the current scale target.', obj(`${V2}.PodsMetricSource`, { metric: [1, metricId()], target: [2, target()] }, { required: ['metric', 'target'] }))],
  resource: [4, described('resource refers to a resource metric (such as those specified in requests and limits) describing each pod in the current scale target.', obj(`${V2}.ResourceMetricSource`, { name: [1, str('name is the name of the resource in question.')], target: [2, target()] }, { required: ['name', 'target'] }))],
  containerResource: [7, described('containerResource refers to a resource metric describing a single container in each pod of the current scale target.', obj(`${V2}.ContainerResourceMetricSource`, { name: [1, str('name is the name of the resource in question.')], target: [2, target()], container: [3, str('container is the name of the container in the pods of the scaling target.')] }, { required: ['name', 'target', 'container'] }))],
  external: [5, described('external refers to a global metric that is not associated with any Kubernetes object.', obj(`${V2}.ExternalMetricSource`, { metric: [1, metricId()], target: [2, target()] }, { required: ['metric', 'target'] }))],
}, { required: ['type'] });

const metricStatus = obj(`${V2}.MetricStatus`, {
  type: [1, str('type is the type of metric source.')],
  object: [2, described('object refers to a metric describing a single kubernetes object.', obj(`${V2}.ObjectMetricStatus`, { metric: [1, metricId()], current: [2, current()], describedObject: [3, describedObject()] }))],
  pods: [3, described('pods refers to a metric describing each pod in the current scale target.', obj(`${V2}.PodsMetricStatus`, { metric: [1, metricId()], current: [2, current()] }))],
  resource: [4, described('resource refers to a resource metric describing each pod in the current scale target.', obj(`${V2}.ResourceMetricStatus`, { name: [1, str('name is the name of the resource in question.')], current: [2, current()] }))],
  containerResource: [7, described('containerResource refers to a resource metric describing a single container in each pod in the current scale target.', obj(`${V2}.ContainerResourceMetricStatus`, { name: [1, str('name is the name of the resource in question.')], current: [2, current()], container: [3, str('container is the name of the container in the pods of the scaling target.')] }))],
  external: [5, described('external refers to a global metric that is not associated with any Kubernetes object.', obj(`${V2}.ExternalMetricStatus`, { metric: [1, metricId()], current: [2, current()] }))],
}, { required: ['type'] });

const scalingRules = obj(`${V2}.HPAScalingRules`, {
  stabilizationWindowSeconds: [3, ptr(int32('stabilizationWindowSeconds is the number of seconds for which past recommendations should be considered while scaling up or scaling down (0 to 3600).'))],
  selectPolicy: [1, str('selectPolicy is used to specify which policy should be used: Max (default), Min or Disabled.')],
  policies: [2, atomicList(obj(`${V2}.HPAScalingPolicy`, {
    type: [1, str('type is used to specify the scaling policy: Pods or Percent.')],
    value: [2, int32('value contains the amount of change which is permitted by the policy. It must be greater than zero.')],
    periodSeconds: [3, int32('periodSeconds specifies the window of time for which the policy should hold true (1 to 1800).')],
  }, { required: ['type', 'value', 'periodSeconds'] }), 'policies is a list of potential scaling polices which can be used during scaling.')],
  tolerance: [4, quantity('tolerance is the tolerance on the ratio between the current and desired metric value under which no updates are made to the desired number of replicas (beta upstream, behind HPAConfigurableTolerance).')],
});

const hpaCondition = obj(`${V2}.HorizontalPodAutoscalerCondition`, {
  type: [1, str('type describes the current condition.')],
  status: [2, str('status is the status of the condition (True, False, Unknown).')],
  lastTransitionTime: [3, time('lastTransitionTime is the last time the condition transitioned from one status to another.')],
  reason: [4, str("reason is the reason for the condition's last transition.")],
  message: [5, str('message is a human-readable explanation containing details about the transition.')],
}, { required: ['type', 'status'] });

export const hpaV2Schema = withMeta(`${V2}.HorizontalPodAutoscaler`, {
  spec: [2, described('spec is the specification for the behaviour of the autoscaler.', obj(`${V2}.HorizontalPodAutoscalerSpec`, {
    scaleTargetRef: [1, described('scaleTargetRef points to the target resource to scale.', ref)],
    minReplicas: [2, ptr(int32('minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down. It defaults to 1 pod.'))],
    maxReplicas: [3, int32('maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.')],
    metrics: [4, atomicList(metricSpec, 'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used). If not set, the default metric will be set to 80% average CPU utilization.')],
    behavior: [5, described('behavior configures the scaling behavior of the target in both Up and Down directions.', obj(`${V2}.HorizontalPodAutoscalerBehavior`, {
      scaleUp: [1, described('scaleUp is scaling policy for scaling Up.', scalingRules)],
      scaleDown: [2, described('scaleDown is scaling policy for scaling Down.', scalingRules)],
    }))],
  }, { required: ['scaleTargetRef', 'maxReplicas'] }))],
  status: [3, described('status is the current information about the autoscaler.', obj(`${V2}.HorizontalPodAutoscalerStatus`, {
    observedGeneration: [1, ptr(int64('observedGeneration is the most recent generation observed by this autoscaler.'))],
    lastScaleTime: [2, time('lastScaleTime is the last time the HorizontalPodAutoscaler scaled the number of pods.')],
    currentReplicas: [3, int32('currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.')],
    desiredReplicas: [4, int32('desiredReplicas is the desired number of replicas of pods managed by this autoscaler, as last calculated by the autoscaler.')],
    currentMetrics: [5, atomicList(metricStatus, 'currentMetrics is the last read state of the metrics used by this autoscaler.')],
    conditions: [6, mapList(hpaCondition, ['type'], 'conditions is the set of conditions required for this autoscaler to scale its target, and indicates whether or not those conditions are met.')],
  }, { required: ['desiredReplicas'] }))],
});

export const hpaV1Schema = withMeta(`${V1}.HorizontalPodAutoscaler`, {
  spec: [2, described('spec defines the behaviour of autoscaler.', obj(`${V1}.HorizontalPodAutoscalerSpec`, {
    scaleTargetRef: [1, described('reference to scaled resource; horizontal pod autoscaler will learn the current resource consumption and will set the desired number of pods by using its Scale subresource.', crossVersionRef(V1))],
    minReplicas: [2, ptr(int32('minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down. It defaults to 1 pod.'))],
    maxReplicas: [3, int32('maxReplicas is the upper limit for the number of pods that can be set by the autoscaler; cannot be smaller than MinReplicas.')],
    targetCPUUtilizationPercentage: [4, ptr(int32('targetCPUUtilizationPercentage is the target average CPU utilization (represented as a percentage of requested CPU) over all the pods; if not specified the default autoscaling policy will be used.'))],
  }, { required: ['scaleTargetRef', 'maxReplicas'] }))],
  status: [3, described('status is the current information about the autoscaler.', obj(`${V1}.HorizontalPodAutoscalerStatus`, {
    observedGeneration: [1, ptr(int64('observedGeneration is the most recent generation observed by this autoscaler.'))],
    lastScaleTime: [2, time('lastScaleTime is the last time the HorizontalPodAutoscaler scaled the number of pods.')],
    currentReplicas: [3, int32('currentReplicas is the current number of replicas of pods managed by this autoscaler.')],
    desiredReplicas: [4, int32('desiredReplicas is the desired number of replicas of pods managed by this autoscaler.')],
    currentCPUUtilizationPercentage: [5, ptr(int32('currentCPUUtilizationPercentage is the current average CPU utilization over all pods, represented as a percentage of requested CPU.'))],
  }, { required: ['currentReplicas', 'desiredReplicas'] }))],
});
