/**
 * Upstream's horizontal pod autoscaler controller (pkg/controller/podautoscaler/horizontal.go):
 * an informer over autoscaling/v2 HorizontalPodAutoscalers and one over pods, a work queue that
 * reconciles each HPA on every change and again every --horizontal-pod-autoscaler-sync-period
 * (15 s). A reconcile reads the target's scale sub-resource (any kind that declares one), bounds
 * it by min/maxReplicas, or computes every metric's recommendation (hpa-metrics.ts; the highest
 * wins), normalises it (scaling-behavior.ts), writes spec.replicas of the target when it changes
 * (SuccessfulRescale event, lastScaleTime), and writes the status: currentReplicas,
 * desiredReplicas, currentMetrics and the conditions AbleToScale, ScalingActive and ScalingLimited
 * with upstream's reasons and messages. A metric that cannot be read leaves the scale alone:
 * ScalingActive False with its reason (FailedGetResourceMetric) and Warning events.
 */
import type { Logger } from 'pino';
import { realClock, type Clock } from '../../../common/informer/clock';
import type { Informer } from '../../../common/informer/informer';
import { NAMESPACE_INDEX } from '../../../common/informer/indexer';
import { runWorkers, WorkQueue } from '../../../common/informer/work-queue';
import { NOOP_RECORDER, type EventObjectRef, type EventRecorder } from '../../../common/events/recorder';
import { canonicalGroup } from '../../api/group-names';
import { isNotFound } from '../../api/errors';
import { matches, parseLabelSelector } from '../../api/selectors';
import type { KObject } from '../../api/types';
import { scaleOf } from '../../handlers/scale';
import type { ResourceRegistry } from '../../registry/builtin';
import { num, rec, recs, str } from '../../registry/obj-access';
import type { ResourceType } from '../../registry/resource-type';
import { defaultScaleDown, defaultScaleUp } from '../../registry/types/horizontalpodautoscalers';
import { StoreInformers, waitForCacheSync } from '../../store/list-watch';
import type { ObjectStore } from '../../store/object-store';
import { controllerContext } from '../../store/system-context';
import type { WatchCache } from '../../store/watch-cache';
import { MetricFailure, resourceMetric, type MetricResult, type PodUsageSource } from './hpa-metrics';
import { DEFAULT_TOLERANCE } from './replica-calculator';
import { ScalingHistory, type Condition, type ScalingRules } from './scaling-behavior';
import { setCondition, statusChanged } from './hpa-status';

const ctx = controllerContext('horizontal-pod-autoscaler');

export interface HpaControllerOptions {
  log: Logger;
  /** The metrics API's usage of this process (controllers/metrics UsageCache). */
  usage: PodUsageSource;
  informers?: StoreInformers;
  clock?: Clock;
  recorder?: EventRecorder;
  /** How often each HPA is reconciled (default 15 s). */
  syncPeriodMs?: number;
  /** Scale-down stabilisation of HPAs whose behaviour sets none (default 5 min). */
  downscaleStabilizationMs?: number;
  tolerance?: number;
}

type Target = { t: ResourceType; obj: KObject; replicas: number; selector: string };

export class HpaController {
  private readonly informers: StoreInformers;
  private readonly clock: Clock;
  private readonly recorder: EventRecorder;
  private readonly history = new ScalingHistory();

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: HpaControllerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.clock = opts.clock ?? realClock;
    this.recorder = opts.recorder ?? NOOP_RECORDER;
  }

  async run(signal: AbortSignal): Promise<void> {
    const hpaType = this.registry.lookup('autoscaling', 'v2', 'horizontalpodautoscalers')!;
    const podType = this.registry.lookup('', 'v1', 'pods')!;
    const hpas = this.informers.informer(hpaType);
    const pods = this.informers.informer(podType);
    const queue = new WorkQueue({ clock: this.clock });
    const key = (o: KObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
    hpas.addEventHandler(
      {
        onAdd: (o) => queue.add(key(o)),
        onUpdate: (_old, cur) => queue.add(key(cur)),
        onDelete: (o) => {
          this.history.forget(key(o));
          queue.add(key(o));
        },
      },
      { signal },
    );
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, hpas, pods))) return;
    const period = this.opts.syncPeriodMs ?? 15_000;
    const onError = (k: string, err: unknown) => this.opts.log.warn({ err, key: k }, 'reconciling the HorizontalPodAutoscaler failed; retrying');
    await runWorkers(
      queue,
      async (k) => {
        const hpa = hpas.get(k);
        if (!hpa) return;
        await this.reconcile(hpaType, hpa, pods);
        // Upstream requeues every HPA after its resync period, so metrics are read again.
        queue.addAfter(k, period);
      },
      signal,
      { onError },
    );
  }

  private scaleUp(hpa: KObject): ScalingRules {
    return rules(defaultScaleUp(rec(rec(rec(hpa.spec)?.behavior)?.scaleUp)), 0);
  }

  private scaleDown(hpa: KObject): ScalingRules {
    return rules(defaultScaleDown(rec(rec(rec(hpa.spec)?.behavior)?.scaleDown)), Math.round((this.opts.downscaleStabilizationMs ?? 300_000) / 1000));
  }

  /** One reconcile (upstream reconcileAutoscaler). Conflicts on the status write are retried by the queue. */
  async reconcile(hpaType: ResourceType, hpa: KObject, pods: Informer<KObject>): Promise<void> {
    const now = this.clock.now();
    const stamp = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const spec = rec(hpa.spec) ?? {};
    const old = rec(hpa.status) ?? {};
    const status: Record<string, unknown> = { ...old, conditions: recs(old.conditions).map((c) => ({ ...c })) };
    const cond = (type: string, c: Condition) => setCondition(status, type, c, stamp);
    const ref = hpaRef(hpa);
    let target: Target;
    try {
      target = await this.target(hpa);
    } catch (err) {
      const msg = (err as Error).message;
      this.recorder.event(ref, 'Warning', 'FailedGetScale', msg);
      cond('AbleToScale', { status: 'False', reason: 'FailedGetScale', message: `the HPA controller was unable to get the target's current scale: ${msg}` });
      // desiredReplicas is a plain int32 upstream: written 0 until something was computed.
      status.currentReplicas = old.currentReplicas ?? 0;
      status.desiredReplicas = old.desiredReplicas ?? 0;
      return this.writeStatus(hpaType, hpa, status);
    }
    const current = target.replicas;
    const min = num(spec.minReplicas) ?? 1;
    const max = num(spec.maxReplicas) ?? 1;
    status.currentReplicas = current;
    status.observedGeneration = hpa.metadata.generation;
    let desired: number;
    let rescaleReason = '';
    if (current === 0 && min !== 0) {
      desired = 0;
      cond('ScalingActive', { status: 'False', reason: 'ScalingDisabled', message: 'scaling is disabled since the replica count of the target is zero' });
    } else if (current > max) {
      desired = max;
      rescaleReason = 'Current number of replicas above Spec.MaxReplicas';
    } else if (current < min) {
      desired = min;
      rescaleReason = 'Current number of replicas below Spec.MinReplicas';
    } else {
      const computed = this.computeMetrics(hpa, target, pods, current, now, ref, cond);
      if (!computed) {
        status.desiredReplicas = old.desiredReplicas ?? current;
        return this.writeStatus(hpaType, hpa, status);
      }
      status.currentMetrics = computed.map((m) => m.status);
      const best = computed.reduce((a, b) => (b.replicas > a.replicas ? b : a));
      rescaleReason = best.replicas > current ? `${best.name} above target` : 'All metrics below target';
      const n = this.history.normalize(`${hpa.metadata.namespace ?? ''}/${hpa.metadata.name ?? ''}`, best.replicas, current, min, max, this.scaleUp(hpa), this.scaleDown(hpa), now);
      cond('AbleToScale', n.ableToScale);
      cond('ScalingLimited', n.scalingLimited);
      desired = n.replicas;
    }
    if (desired !== current) {
      try {
        await this.writeScale(target, desired);
      } catch (err) {
        const msg = (err as Error).message;
        this.recorder.event(ref, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${rescaleReason}; error: ${msg}`);
        cond('AbleToScale', { status: 'False', reason: 'FailedUpdateScale', message: `the HPA controller was unable to update the target scale: ${msg}` });
        return this.writeStatus(hpaType, hpa, status);
      }
      this.history.recordScale(`${hpa.metadata.namespace ?? ''}/${hpa.metadata.name ?? ''}`, current, desired, now);
      cond('AbleToScale', { status: 'True', reason: 'SucceededRescale', message: `the HPA controller was able to update the target scale to ${desired}` });
      this.recorder.event(ref, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${rescaleReason}`);
      this.opts.log.info({ hpa: `${hpa.metadata.namespace}/${hpa.metadata.name}`, from: current, to: desired, reason: rescaleReason }, 'successful rescale');
      status.lastScaleTime = stamp;
    }
    status.desiredReplicas = desired;
    await this.writeStatus(hpaType, hpa, status);
  }

  /** Every metric's result, or undefined (ScalingActive False, events) when one cannot be read, as upstream's computeReplicasForMetrics with all invalid. */
  private computeMetrics(hpa: KObject, target: Target, pods: Informer<KObject>, current: number, now: number, ref: EventObjectRef, cond: (type: string, c: Condition) => void): MetricResult[] | undefined {
    const selector = parseLabelSelector(target.selector);
    const selected = pods.store.byIndex(NAMESPACE_INDEX, hpa.metadata.namespace ?? '').filter((p) => matches(selector, (k) => p.metadata.labels?.[k]));
    const metrics = recs(rec(hpa.spec)?.metrics);
    const results: MetricResult[] = [];
    const failures: Array<{ err: MetricFailure; what: string }> = [];
    for (const m of metrics) {
      try {
        if (m.type !== 'Resource' && m.type !== 'ContainerResource') throw new MetricFailure(`FailedGet${str(m.type) ?? ''}Metric`, `the ${str(m.type) ?? ''} metric source is not served: svc has no custom or external metrics API`);
        results.push(resourceMetric(m, selected, this.opts.usage, current, now, this.opts.tolerance ?? DEFAULT_TOLERANCE));
      } catch (err) {
        if (!(err instanceof MetricFailure)) throw err;
        const src = rec(m.resource) ?? rec(m.containerResource);
        failures.push({ err, what: src ? `${str(src.name) ?? ''} resource metric value` : `${str(m.type) ?? ''} metric value` });
        this.recorder.event(ref, 'Warning', err.reason, err.message);
      }
    }
    if (failures.length > 0 && results.length === 0) {
      const { err: first, what } = failures[0];
      this.recorder.event(ref, 'Warning', 'FailedComputeMetricsReplicas', `invalid metrics (${failures.length} invalid out of ${metrics.length}), first error is: failed to get ${what}: ${first.message}`);
      cond('ScalingActive', { status: 'False', reason: first.reason, message: `the HPA was unable to compute the replica count: ${first.message}` });
      return undefined;
    }
    const first = results[0];
    cond('ScalingActive', { status: 'True', reason: 'ValidMetricFound', message: `the HPA was able to successfully calculate a replica count from ${first.name}` });
    return results;
  }

  /** The scale target: its type (any kind with a scale declaration), the object, spec replicas and the pods' selector. */
  private async target(hpa: KObject): Promise<Target> {
    const ref = rec(rec(hpa.spec)?.scaleTargetRef) ?? {};
    const kind = str(ref.kind) ?? '';
    const apiVersion = str(ref.apiVersion) ?? '';
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : canonicalGroup(apiVersion.slice(0, slash));
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const t = this.registry.byKind(group, version, kind) ?? this.registry.all().find((x) => x.group === group && x.kind === kind && x.scale);
    if (!t) throw new Error(`no matches for kind "${kind}" in group "${group}"`);
    if (!t.scale) throw new Error(`${t.resource}${t.group ? '.' + t.group : ''} does not implement the scale subresource`);
    const obj = await this.store.get(t, hpa.metadata.namespace ?? '', str(ref.name) ?? '');
    const scale = scaleOf(obj, t.scale);
    return { t, obj, replicas: num(rec(scale.spec)?.replicas) ?? 0, selector: str(rec(scale.status)?.selector) ?? '' };
  }

  /** Writes the target's desired replicas at the version read, as a scale sub-resource update. */
  private async writeScale(target: Target, replicas: number): Promise<void> {
    const path = target.t.scale!.specReplicasPath.split('.').filter(Boolean);
    await this.store.update(
      target.t,
      target.obj.metadata.namespace ?? '',
      target.obj.metadata.name!,
      (cur) => {
        if (!cur) throw new Error('the scale target is gone');
        const next = structuredClone(cur);
        let at: Record<string, unknown> = next;
        for (const p of path.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>;
        at[path[path.length - 1]] = replicas;
        return next;
      },
      { ...ctx, subresource: 'scale' },
    );
  }

  private async writeStatus(hpaType: ResourceType, hpa: KObject, status: Record<string, unknown>): Promise<void> {
    if (!statusChanged(rec(hpa.status) ?? {}, status)) return;
    try {
      await this.store.update(hpaType, hpa.metadata.namespace ?? '', hpa.metadata.name!, () => ({ ...hpa, status }), { ...ctx, subresource: 'status' });
    } catch (err) {
      // A deleted HPA needs no status; a conflict (and anything else) is retried by the queue.
      if (!isNotFound(err)) throw err;
    }
  }
}

function rules(r: Record<string, unknown>, defaultWindow: number): ScalingRules {
  return {
    stabilizationWindowSeconds: num(r.stabilizationWindowSeconds) ?? defaultWindow,
    selectPolicy: (str(r.selectPolicy) ?? 'Max') as ScalingRules['selectPolicy'],
    policies: recs(r.policies).map((p) => ({ type: p.type === 'Pods' ? 'Pods' : 'Percent', value: num(p.value) ?? 0, periodSeconds: num(p.periodSeconds) ?? 15 })),
  };
}

function hpaRef(hpa: KObject): EventObjectRef {
  return { kind: 'HorizontalPodAutoscaler', apiVersion: 'autoscaling/v2', namespace: hpa.metadata.namespace, name: hpa.metadata.name ?? '', uid: hpa.metadata.uid, resourceVersion: hpa.metadata.resourceVersion };
}
