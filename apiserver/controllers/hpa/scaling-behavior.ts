/**
 * Upstream's behaviour normalisation (horizontal.go normalizeDesiredReplicasWithBehaviors): the
 * stabilisation windows (the lowest recommendation of the scale-up window and the highest of the
 * scale-down window bound the change) and the rate policies (Pods / Percent per period, the Max or
 * Min of them, or Disabled), measured against the scale events of each policy's period, then min
 * and max replicas. Keeps, per HPA, the recommendations and scale events it needs; time comes from
 * the caller. Differs: an HPA without a behaviour is normalised with the default rules (scale-up
 * 4 pods or 100% per 15 s, scale-down 100% per 15 s after the --horizontal-pod-autoscaler-downscale-
 * stabilization window) where upstream's older path limits scale-up to max(2 × current, 4) per sync.
 */

export interface ScalingPolicy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}

export interface ScalingRules {
  stabilizationWindowSeconds: number;
  selectPolicy: 'Max' | 'Min' | 'Disabled';
  policies: readonly ScalingPolicy[];
}

export interface Condition {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export interface Normalized {
  replicas: number;
  /** AbleToScale after a successful read (before any scale write). */
  ableToScale: Condition;
  scalingLimited: Condition;
}

interface Timestamped {
  value: number;
  atMs: number;
}

/** The longest time a scale event can matter: the longest policy period (upstream keeps events of the longest period). */
const MAX_PERIOD_MS = 1800 * 1000;

function changeInPeriod(events: readonly Timestamped[], periodSeconds: number, nowMs: number): number {
  const cutoff = nowMs - periodSeconds * 1000;
  return events.filter((e) => e.atMs > cutoff).reduce((s, e) => s + e.value, 0);
}

/** Upstream calculateScaleUpLimitWithScalingRules. */
export function scaleUpLimit(current: number, up: readonly Timestamped[], down: readonly Timestamped[], rules: ScalingRules, nowMs: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
  let result = rules.selectPolicy === 'Min' ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
  for (const p of rules.policies) {
    const start = current - changeInPeriod(up, p.periodSeconds, nowMs) + changeInPeriod(down, p.periodSeconds, nowMs);
    const proposed = p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100));
    result = pick(result, proposed);
  }
  return result;
}

/** Upstream calculateScaleDownLimitWithBehaviors. */
export function scaleDownLimit(current: number, up: readonly Timestamped[], down: readonly Timestamped[], rules: ScalingRules, nowMs: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
  let result = rules.selectPolicy === 'Min' ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER;
  for (const p of rules.policies) {
    const start = current - changeInPeriod(up, p.periodSeconds, nowMs) + changeInPeriod(down, p.periodSeconds, nowMs);
    const proposed = p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100));
    result = pick(result, proposed);
  }
  return result;
}

export class ScalingHistory {
  private readonly recommendations = new Map<string, Timestamped[]>();
  private readonly upEvents = new Map<string, Timestamped[]>();
  private readonly downEvents = new Map<string, Timestamped[]>();

  /** Records a scale the controller made (upstream storeScaleEvent), dropping events older than any period. */
  recordScale(key: string, from: number, to: number, nowMs: number): void {
    const map = to > from ? this.upEvents : this.downEvents;
    const kept = (map.get(key) ?? []).filter((e) => e.atMs > nowMs - MAX_PERIOD_MS);
    kept.push({ value: Math.abs(to - from), atMs: nowMs });
    map.set(key, kept);
  }

  /** Forgets a deleted HPA. */
  forget(key: string): void {
    this.recommendations.delete(key);
    this.upEvents.delete(key);
    this.downEvents.delete(key);
  }

  /** Upstream stabilizeRecommendationWithBehaviors: records the raw recommendation and answers the stabilised one. */
  private stabilize(key: string, desired: number, current: number, up: ScalingRules, down: ScalingRules, nowMs: number): { replicas: number; reason: string; message: string } {
    const upCutoff = nowMs - up.stabilizationWindowSeconds * 1000;
    const downCutoff = nowMs - down.stabilizationWindowSeconds * 1000;
    let upRec = desired;
    let downRec = desired;
    const recs = this.recommendations.get(key) ?? [];
    let oldIndex = -1;
    recs.forEach((r, i) => {
      if (r.atMs > upCutoff) upRec = Math.min(r.value, upRec);
      if (r.atMs > downCutoff) downRec = Math.max(r.value, downRec);
      if (r.atMs < upCutoff && r.atMs < downCutoff) oldIndex = i;
    });
    let replicas = current;
    if (replicas < upRec) replicas = upRec;
    if (replicas > downRec) replicas = downRec;
    if (oldIndex >= 0) recs[oldIndex] = { value: desired, atMs: nowMs };
    else recs.push({ value: desired, atMs: nowMs });
    this.recommendations.set(key, recs);
    return desired >= current
      ? { replicas, reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' }
      : { replicas, reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' };
  }

  /** Upstream convertDesiredReplicasWithBehaviorRate. */
  private limitRate(key: string, desired: number, current: number, min: number, max: number, up: ScalingRules, down: ScalingRules, nowMs: number): { replicas: number; reason: string; message: string } {
    const ups = this.upEvents.get(key) ?? [];
    const downs = this.downEvents.get(key) ?? [];
    if (desired > current) {
      const limit = Math.max(current, scaleUpLimit(current, ups, downs, up, nowMs));
      const [allowed, reason, message] = max > limit ? [limit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate'] : [max, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count'];
      if (desired > allowed) return { replicas: allowed, reason, message };
    } else if (desired < current) {
      const limit = Math.min(current, scaleDownLimit(current, ups, downs, down, nowMs));
      const [allowed, reason, message] = min < limit ? [limit, 'ScaleDownLimit', 'the desired replica count is decreasing faster than the maximum scale rate'] : [min, 'TooFewReplicas', 'the desired replica count is less than the minimum replica count'];
      if (desired < allowed) return { replicas: allowed, reason, message };
    }
    return { replicas: desired, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
  }

  /** Upstream normalizeDesiredReplicasWithBehaviors: stabilised, then rate-limited and bounded, with the conditions it sets. */
  normalize(key: string, desired: number, current: number, min: number, max: number, up: ScalingRules, down: ScalingRules, nowMs: number): Normalized {
    const stable = this.stabilize(key, desired, current, up, down, nowMs);
    const ableToScale: Condition = stable.replicas !== desired ? { status: 'True', reason: stable.reason, message: stable.message } : { status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
    const limited = this.limitRate(key, stable.replicas, current, min, max, up, down, nowMs);
    const scalingLimited: Condition = { status: limited.replicas === stable.replicas ? 'False' : 'True', reason: limited.reason, message: limited.message };
    return { replicas: limited.replicas, ableToScale, scalingLimited };
  }
}
