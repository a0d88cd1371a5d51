import type { EventRecorder } from '../../../common/events/recorder';
import type { Informer } from '../../../common/informer/informer';
import { errors, isAlreadyExists, isNotFound } from '../../api/errors';
import { jsonEqual } from '../../api/json-equal';
import type { KObject } from '../../api/types';
import type { ResourceType } from '../../registry/resource-type';
import type { ObjectStore, WriteContext } from '../../store/object-store';
import { ownedBy } from './controller-index';
import { controllerRefOf, newControllerRef } from './controller-ref';
import { refTo } from './pod-control';
import { podPhase } from './pod-state';
import type { RolloutOps } from './deployment-rollout';
import { getCondition, hasProgressDeadline, newCondition, PROGRESSING, REASON, setCondition, statusOf, type DeploymentStatus } from './deployment-status';
import {
  actualReplicasSum,
  annotation,
  computeHash,
  dspec,
  equalIgnoreHash,
  findNewReplicaSet,
  findOldReplicaSets,
  maxRevision,
  maxSurge,
  newRSNewReplicas,
  POD_TEMPLATE_HASH,
  REVISION,
  replicasAnnotationsNeedUpdate,
  replicasOf,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
} from './deployment-util';

/** What one Deployment sync needs from its controller. */
export interface SyncDeps {
  store: ObjectStore;
  rsType: ResourceType;
  deploymentType: ResourceType;
  rsInf: Informer<KObject>;
  podInf: Informer<KObject>;
  recorder: EventRecorder;
  ctx: WriteContext;
  now(): number;
  requeueAfter(key: string, ms: number): void;
}

/**
 * The store side of one Deployment sync (RolloutOps): creating the new ReplicaSet with upstream's
 * name, labels, annotations and collision handling; scaling ReplicaSets with their replicas
 * annotations and ScalingReplicaSet events; writing the Deployment's status and revision. It
 * holds the Deployment as this sync last wrote it, so later steps build on earlier writes.
 */
export class DeploymentSync implements RolloutOps {
  constructor(
    private readonly deps: SyncDeps,
    /** The Deployment being synced (a copy of the cache's); status and the revision annotation follow this sync's writes. */
    readonly d: KObject,
  ) {}

  now(): number {
    return this.deps.now();
  }

  requeueAfter(d: KObject, ms: number): void {
    this.deps.requeueAfter(`${d.metadata.namespace}/${d.metadata.name}`, ms);
  }

  async replicaSets(d: KObject, cachedList: readonly KObject[], create: boolean): Promise<{ newRS?: KObject; oldRSs: KObject[] }> {
    // What this sync wrote already replaces the cache's version (the informer has not caught up).
    const rsList = cachedList.map((rs) => this.written.get(rs.metadata.uid!) ?? rs);
    const oldRSs = findOldReplicaSets(d, rsList);
    const existing = findNewReplicaSet(d, rsList);
    const newRevision = maxRevision(oldRSs) + 1;
    if (existing) return { newRS: await this.syncExisting(d, existing, newRevision), oldRSs };
    if (!create) return { oldRSs };
    return { newRS: await this.createNew(d, oldRSs, newRevision), oldRSs };
  }

  /** Upstream getNewReplicaSet for an existing one: annotations and minReadySeconds follow the Deployment; the Deployment takes its revision. */
  private async syncExisting(d: KObject, rs: KObject, newRevision: number): Promise<KObject> {
    const copy = structuredClone(rs);
    const annotated = setNewReplicaSetAnnotations(d, copy, newRevision, true);
    const minReady = dspec(d).minReadySeconds ?? 0;
    const spec = copy.spec as { minReadySeconds?: number };
    let out = rs;
    if (annotated || (spec.minReadySeconds ?? 0) !== minReady) {
      spec.minReadySeconds = minReady;
      out = await this.writeReplicaSet(rs, (cur) => {
        cur.metadata.annotations = copy.metadata.annotations;
        (cur.spec as { minReadySeconds?: number }).minReadySeconds = minReady;
      });
    }
    let changed = this.setRevision(annotation(out, REVISION) ?? '');
    const s = structuredClone(statusOf(d));
    if (hasProgressDeadline(d) && !getCondition(s, PROGRESSING)) {
      setCondition(s, newCondition(PROGRESSING, 'True', REASON.foundNewRS, `Found new replica set "${out.metadata.name}"`, this.now()));
      changed = true;
    }
    if (changed) await this.writeStatus(d, s, true);
    return out;
  }

  /** Upstream getNewReplicaSet's create: `<deployment>-<hash>`, the hash in its template labels and selector. */
  private async createNew(d: KObject, oldRSs: KObject[], newRevision: number): Promise<KObject> {
    const spec = dspec(d);
    const collisionCount = statusOf(d).collisionCount;
    const hash = computeHash(spec.template, collisionCount);
    const template = structuredClone(spec.template ?? {});
    template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, [POD_TEMPLATE_HASH]: hash } };
    const selector = structuredClone((spec.selector ?? {}) as { matchLabels?: Record<string, string> });
    selector.matchLabels = { ...selector.matchLabels, [POD_TEMPLATE_HASH]: hash };
    const ns = d.metadata.namespace ?? '';
    const rs: KObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: `${d.metadata.name}-${hash}`, namespace: ns, ownerReferences: [newControllerRef(d, 'apps/v1', 'Deployment')], labels: template.metadata.labels },
      spec: { replicas: 0, minReadySeconds: spec.minReadySeconds ?? 0, selector, template },
    };
    const replicas = newRSNewReplicas(d, [...oldRSs, rs], rs);
    (rs.spec as { replicas: number }).replicas = replicas;
    setNewReplicaSetAnnotations(d, rs, newRevision, false);
    let created: KObject;
    let alreadyExists = false;
    try {
      created = await this.deps.store.create(this.deps.rsType, ns, rs, this.deps.ctx);
    } catch (err) {
      if (isAlreadyExists(err)) {
        const found = await this.deps.store.get(this.deps.rsType, ns, rs.metadata.name!).catch(() => undefined);
        // Ours already (a create this cache has not seen yet): use it. Anything else is a hash collision.
        if (found && controllerRefOf(found)?.uid === d.metadata.uid && equalIgnoreHash(spec.template, (found.spec as { template?: unknown }).template)) {
          created = found;
          alreadyExists = true;
        } else {
          const s = structuredClone(statusOf(d));
          s.collisionCount = (collisionCount ?? 0) + 1;
          await this.writeStatus(d, s, true);
          throw err;
        }
      } else {
        const message = `Failed to create new replica set "${rs.metadata.name}": ${(err as Error).message}`;
        if (hasProgressDeadline(d)) {
          const s = structuredClone(statusOf(d));
          setCondition(s, newCondition(PROGRESSING, 'False', REASON.failedRSCreate, message, this.now()));
          await this.writeStatus(d, s, true);
        }
        this.deps.recorder.event(refTo(d), 'Warning', 'FailedCreate', message);
        throw err;
      }
    }
    if (!alreadyExists && replicas > 0) this.deps.recorder.event(refTo(d), 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${created.metadata.name} from 0 to ${replicas}`);
    let changed = this.setRevision(String(newRevision));
    const s = structuredClone(statusOf(d));
    if (!alreadyExists && hasProgressDeadline(d)) {
      setCondition(s, newCondition(PROGRESSING, 'True', REASON.newRSCreated, `Created new replica set "${created.metadata.name}"`, this.now()));
      changed = true;
    }
    if (changed) await this.writeStatus(d, s, true);
    return created;
  }

  /** Upstream SetDeploymentRevision on the in-memory Deployment; written with the next status write. */
  private setRevision(revision: string): boolean {
    if (annotation(this.d, REVISION) === revision) return false;
    this.d.metadata.annotations = { ...this.d.metadata.annotations, [REVISION]: revision };
    this.revisionChanged = true;
    return true;
  }

  private revisionChanged = false;
  /** ReplicaSets as this sync wrote them, by uid. */
  private readonly written = new Map<string, KObject>();

  async scale(rs: KObject, size: number, d: KObject, operation: 'up' | 'down'): Promise<KObject> {
    const desired = replicasOf(d);
    const max = desired + maxSurge(d);
    const from = replicasOf(rs);
    if (from === size && !replicasAnnotationsNeedUpdate(rs, desired, max)) return rs;
    const out = await this.writeReplicaSet(rs, (cur) => {
      (cur.spec as { replicas: number }).replicas = size;
      setReplicasAnnotations(cur, desired, max);
    });
    if (from !== size) this.deps.recorder.event(refTo(d), 'Normal', 'ScalingReplicaSet', `Scaled ${operation} replica set ${rs.metadata.name} from ${from} to ${size}`);
    return out;
  }

  /**
   * Writes a change to a ReplicaSet as the cache showed it: refused (409, the sync retries) when
   * its size or generation moved meanwhile, since the decision was made on the cached one;
   * status changes by the ReplicaSet controller do not get in the way.
   */
  private async writeReplicaSet(rs: KObject, change: (cur: KObject) => void): Promise<KObject> {
    const { object } = await this.deps.store.update(
      this.deps.rsType,
      rs.metadata.namespace ?? '',
      rs.metadata.name!,
      (cur) => {
        if (!cur || cur.metadata.uid !== rs.metadata.uid) throw errors.notFound('replicasets', rs.metadata.name!, 'apps');
        if (replicasOf(cur) !== replicasOf(rs) || cur.metadata.generation !== rs.metadata.generation) {
          throw errors.conflict('replicasets', rs.metadata.name!, 'the object has been modified; please apply your changes to the latest version and try again', 'apps');
        }
        change(cur);
        return cur;
      },
      this.deps.ctx,
    );
    this.written.set(object.metadata.uid!, object);
    return object;
  }

  async deleteReplicaSet(rs: KObject): Promise<void> {
    try {
      await this.deps.store.delete(this.deps.rsType, rs.metadata.namespace ?? '', rs.metadata.name!, { preconditions: { uid: rs.metadata.uid }, propagationPolicy: 'Background' }, this.deps.ctx);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** Writes status (and a changed revision annotation) through the status sub-resource unless nothing changed. */
  async writeStatus(d: KObject, s: DeploymentStatus, force = false): Promise<void> {
    if (!force && !this.revisionChanged && jsonEqual(statusOf(this.d), s)) return;
    const revision = this.revisionChanged ? annotation(this.d, REVISION) : undefined;
    await this.deps.store.update(
      this.deps.deploymentType,
      d.metadata.namespace ?? '',
      d.metadata.name!,
      (cur) => {
        if (!cur || cur.metadata.uid !== d.metadata.uid) throw errors.notFound('deployments', d.metadata.name!, 'apps');
        cur.status = s;
        if (revision !== undefined) cur.metadata.annotations = { ...cur.metadata.annotations, [REVISION]: revision };
        return cur;
      },
      { ...this.deps.ctx, subresource: 'status' },
    );
    this.d.status = s;
    this.revisionChanged = false;
  }

  oldPodsRunning(newRS: KObject | undefined, oldRSs: readonly KObject[]): boolean {
    if (actualReplicasSum(oldRSs) > 0) return true;
    for (const rs of oldRSs) {
      if (newRS && rs.metadata.uid === newRS.metadata.uid) continue;
      for (const pod of ownedBy(this.deps.podInf, rs.metadata.uid!)) {
        const phase = podPhase(pod);
        if (phase !== 'Failed' && phase !== 'Succeeded') return true;
      }
    }
    return false;
  }
}
