import type { Logger } from 'pino';
import { referenceTo } from '../../common/events/object-ref';
import { NOOP_RECORDER, type EventRecorder } from '../../common/events/recorder';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { isNotFound } from '../api/errors';
import { LOCAL_PATH_PROVISIONER } from '../api/local-path';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import { get, rec, str, strAt } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import { storageClassAnnotation, storageClassOf } from '../registry/types/pv-common';
import { BINDING_WAIT_FOR_FIRST_CONSUMER, defaultStorageClass, RECLAIM_DELETE } from '../registry/types/storage-common';
import { podClaimNames } from '../scheduler/volume-binding';
import { ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, claimRefIs, findMatchingVolume } from '../scheduler/volume-match';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';
import { localPathVolume } from './local-path-provisioner';
import { annotation, binderCtx, bindClaim, bindVolume, setClaimPhase, setVolumePhase, unbindVolume, type BinderTypes } from './pv-binder-writes';

export interface PvBinderOptions {
  log: Logger;
  now: () => Date;
  informers?: StoreInformers;
  /** Events about claims and volumes (upstream reporting component persistentvolume-controller). */
  recorder?: EventRecorder;
  /** Whether claims of svc.io/local-path classes are provisioned (--local-path-provisioner). */
  localPath?: boolean;
}

const claimRef = { kind: 'PersistentVolumeClaim', apiVersion: 'v1' };
const CLAIM_INDEX = 'pv-binder:claims';
const TERMINAL: readonly string[] = ['Succeeded', 'Failed'];
const volumeRef = { kind: 'PersistentVolume', apiVersion: 'v1' };

/**
 * Upstream's PersistentVolume controller (binder half) with the built-in local-path provisioner:
 * claims bind to the smallest Available volume that fits (class, access modes, volumeMode,
 * selector, size; scheduler/volume-match.ts), both sides written (the volume's claimRef and phase
 * Bound; the claim's volumeName, bind-completed annotations and status Bound with the volume's
 * capacity and access modes). Claims of a WaitForFirstConsumer class wait for the scheduler's
 * selected-node annotation, then bind on that node or are provisioned there. A volume whose claim
 * is gone is Released; with reclaim policy Delete it is deleted (a local-path volume stays
 * terminating until its node removed the directory and the finalizer). Claims that cannot bind
 * get upstream's events (FailedBinding, WaitForFirstConsumer, ProvisioningFailed, ExternalProvisioning).
 *
 * Claims naming no class get the default class once there is one (upstream's retroactive
 * default class).
 *
 * Where we differ: Recycle is not done (the volume is marked Failed with a Warning); Delete of a
 * volume no provisioner here made deletes the object only, never data.
 */
export class PvBinder {
  private readonly informers: StoreInformers;
  private readonly recorder: EventRecorder;
  private readonly t: BinderTypes & { classes: ResourceType; nodes: ResourceType; pods: ResourceType };

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    registry: ResourceRegistry,
    private readonly opts: PvBinderOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.recorder = opts.recorder ?? NOOP_RECORDER;
    const type = (g: string, r: string) => {
      const t = registry.lookup(g, 'v1', r);
      if (!t) throw new Error(`${r} type not registered`);
      return t;
    };
    this.t = { claims: type('', 'persistentvolumeclaims'), volumes: type('', 'persistentvolumes'), classes: type('storage.svc.io', 'storageclasses'), nodes: type('', 'nodes'), pods: type('', 'pods') };
  }

  private claims = this.placeholder();
  private volumes = this.placeholder();
  private classes = this.placeholder();
  private nodes = this.placeholder();
  /** Pods by the claims they use ("ns/claim"), not in a terminal phase. */
  private podsUsing: (claimKey: string) => KObject[] = () => [];

  private placeholder(): { get(key: string): KObject | undefined; list(): KObject[] } {
    return { get: () => undefined, list: () => [] };
  }

  async run(signal: AbortSignal): Promise<void> {
    const claims = this.informers.informer(this.t.claims);
    const volumes = this.informers.informer(this.t.volumes);
    const classes = this.informers.informer(this.t.classes);
    const nodes = this.informers.informer(this.t.nodes);
    this.claims = claims.store;
    this.volumes = volumes.store;
    this.classes = classes.store;
    this.nodes = nodes.store;
    const pods = this.informers.informer(this.t.pods);
    if (!pods.hasIndexer(CLAIM_INDEX)) pods.addIndexers({ [CLAIM_INDEX]: (p) => podClaimNames(p).map((c) => `${p.metadata.namespace}/${c}`) });
    this.podsUsing = (claimKey) => pods.store.byIndex(CLAIM_INDEX, claimKey).filter((p) => !TERMINAL.includes(strAt(p, 'status', 'phase')));
    const claimQueue = new WorkQueue();
    const volumeQueue = new WorkQueue();
    const key = (o: KObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata.name ?? ''));
    claims.addEventHandler({ onAdd: (o) => claimQueue.add(key(o)), onUpdate: (_p, o) => claimQueue.add(key(o)), onDelete: (o) => this.claimDeleted(o, volumeQueue) }, { signal });
    // A volume's claim is looked at again on every change of the volume: a volume made for it or
    // pre-bound to it binds, one that went away makes a bound claim Lost.
    // A volume free for any claim (just made Available, say) is offered to every unbound claim.
    const byRef = (o: KObject) => {
      const ref = rec(get(o, 'spec', 'claimRef'));
      if (ref) claimQueue.add(`${str(ref.namespace)}/${str(ref.name)}`);
      else for (const c of claims.store.list()) if (!strAt(c, 'spec', 'volumeName')) claimQueue.add(key(c));
    };
    volumes.addEventHandler(
      {
        onAdd: (o) => (volumeQueue.add(key(o)), byRef(o)),
        onUpdate: (_p, o) => (volumeQueue.add(key(o)), byRef(o)),
        onDelete: byRef,
      },
      { signal },
    );
    // A pod that ends or goes away may free a Released volume to be deleted.
    const podDone = (p: KObject) => {
      for (const c of podClaimNames(p)) {
        for (const pv of this.volumes.list()) {
          const ref = rec(get(pv, 'spec', 'claimRef'));
          if (ref && str(ref.namespace) === p.metadata.namespace && str(ref.name) === c) volumeQueue.add(pv.metadata.name ?? '');
        }
      }
    };
    pods.addEventHandler({ onUpdate: (_o, p) => TERMINAL.includes(strAt(p, 'status', 'phase')) && podDone(p), onDelete: podDone }, { signal });
    // A node that appears may be the one a waiting claim was given (provisioning waits for it).
    nodes.addEventHandler(
      {
        onAdd: (n) => {
          for (const c of claims.store.list()) if (!strAt(c, 'spec', 'volumeName') && annotation(c, ANN_SELECTED_NODE) === n.metadata.name) claimQueue.add(key(c));
        },
      },
      { signal },
    );
    // A new or changed class may let waiting claims go on.
    const allClaims = () => claims.store.listKeys().forEach((k) => claimQueue.add(k));
    classes.addEventHandler({ onAdd: allClaims, onUpdate: allClaims }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, claims, volumes, classes, nodes, pods))) return;
    const onError = (what: string) => (k: string, err: unknown) => this.opts.log.warn({ err, [what]: k }, `syncing ${what} failed; retrying`);
    await Promise.all([
      runWorkers(claimQueue, (k) => this.syncClaim(k), signal, { onError: onError('claim') }),
      runWorkers(volumeQueue, (k) => this.syncVolume(k), signal, { onError: onError('volume') }),
    ]);
  }

  private claimDeleted(claim: KObject, volumeQueue: WorkQueue): void {
    const name = strAt(claim, 'spec', 'volumeName');
    if (name) volumeQueue.add(name);
    for (const pv of this.volumes.list()) if (claimRefIs(pv, claim)) volumeQueue.add(pv.metadata.name ?? '');
  }

  /** Upstream syncClaim: unbound claims are matched or provisioned; bound ones kept consistent with their volume. */
  async syncClaim(key: string): Promise<void> {
    const claim = this.claims.get(key);
    if (!claim || claim.metadata.deletionTimestamp) return;
    const volumeName = strAt(claim, 'spec', 'volumeName');
    if (!volumeName) return this.syncUnboundClaim(claim);
    const pv = this.volumes.get(volumeName);
    if (!pv) {
      if (strAt(claim, 'status', 'phase') === 'Bound') {
        await setClaimPhase(this.store, this.t, claim, 'Lost');
        this.recorder.event(referenceTo(claim, claimRef), 'Warning', 'ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
      } else {
        this.recorder.event(referenceTo(claim, claimRef), 'Normal', 'FailedBinding', `volume "${volumeName}" not found`);
      }
      return;
    }
    const ref = rec(get(pv, 'spec', 'claimRef'));
    if (!ref || claimRefIs(pv, claim)) {
      // The claim names the volume (the user pre-bound it, or we bound it and wrote the volume first).
      if (!ref || str(ref.uid) !== claim.metadata.uid || strAt(pv, 'status', 'phase') !== 'Bound') {
        if (!(await bindVolume(this.store, this.t, pv, claim))) return;
      }
      await bindClaim(this.store, this.t, claim, pv);
      return;
    }
    if (strAt(claim, 'status', 'phase') === 'Bound') {
      await setClaimPhase(this.store, this.t, claim, 'Lost');
      this.recorder.event(referenceTo(claim, claimRef), 'Warning', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
    } else {
      this.recorder.event(referenceTo(claim, claimRef), 'Warning', 'FailedBinding', `volume "${volumeName}" already bound to a different claim.`);
    }
  }

  private async syncUnboundClaim(claim: KObject): Promise<void> {
    if (await this.assignDefaultClass(claim)) return;
    const className = storageClassOf(claim);
    const sc = className ? this.classes.get(className) : undefined;
    const delayBinding = sc?.volumeBindingMode === BINDING_WAIT_FOR_FIRST_CONSUMER;
    const nodeName = annotation(claim, ANN_SELECTED_NODE);
    const node = nodeName ? this.nodes.get(nodeName) : undefined;
    const pv = findMatchingVolume(claim, this.volumes.list(), { delayBinding, ...(node ? { node } : {}) });
    if (pv) {
      if (await bindVolume(this.store, this.t, pv, claim)) await bindClaim(this.store, this.t, claim, pv);
      return;
    }
    const ref = referenceTo(claim, claimRef);
    if (delayBinding && !nodeName) {
      this.recorder.event(ref, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
      return;
    }
    if (!className) {
      this.recorder.event(ref, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set');
      return;
    }
    if (!sc) {
      this.recorder.event(ref, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`);
      return;
    }
    const provisioner = str(sc.provisioner) ?? '';
    if (provisioner !== LOCAL_PATH_PROVISIONER || this.opts.localPath === false) {
      await this.markProvisioner(claim, provisioner);
      this.recorder.event(ref, 'Normal', 'ExternalProvisioning', `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`);
      return;
    }
    await this.provision(claim, sc, nodeName);
  }

  /**
   * Upstream's retroactive default class: an unbound claim that names no class at all (made before
   * any class was default, e.g. before the local-path class existed) gets today's default; its
   * update brings it back here. True when it was written.
   */
  private async assignDefaultClass(claim: KObject): Promise<boolean> {
    const sc = rec(claim.spec)?.storageClassName;
    if ((sc !== undefined && sc !== null) || storageClassAnnotation(claim) !== undefined) return false;
    const chosen = defaultStorageClass(this.classes.list());
    if (!chosen?.metadata.name) return false;
    try {
      await this.store.update(this.t.claims, claim.metadata.namespace ?? '', claim.metadata.name ?? '', (cur) => {
        if (!cur || cur.metadata.uid !== claim.metadata.uid || strAt(cur, 'spec', 'volumeName')) return cur ?? claim;
        const spec = rec(cur.spec) ?? {};
        if (spec.storageClassName !== undefined && spec.storageClassName !== null) return cur;
        cur.spec = { ...spec, storageClassName: chosen.metadata.name };
        delete cur.metadata.resourceVersion;
        return cur;
      }, binderCtx);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return true;
  }

  /** The built-in local-path provisioner: a volume pre-bound to the claim on its selected node. */
  private async provision(claim: KObject, sc: KObject, nodeName: string | undefined): Promise<void> {
    const ref = referenceTo(claim, claimRef);
    const fail = (message: string) => this.recorder.event(ref, 'Warning', 'ProvisioningFailed', `failed to provision volume with StorageClass "${sc.metadata.name}": ${message}`);
    if (!nodeName) return fail('configuration error, no node was specified (the class must bind WaitForFirstConsumer)');
    const node = this.nodes.get(nodeName);
    if (!node) return fail(`node "${nodeName}" not found`);
    const made = localPathVolume(claim, sc, node);
    if ('error' in made) return fail(made.error);
    const { pv } = made;
    if (this.volumes.get(pv.metadata.name ?? '')) return; // made already; the volume's sync binds it
    await this.markProvisioner(claim, LOCAL_PATH_PROVISIONER);
    this.recorder.event(ref, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${claim.metadata.namespace}/${claim.metadata.name}"`);
    try {
      await this.store.create(this.t.volumes, '', pv, binderCtx);
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && err.code === 409)) throw err;
    }
    this.recorder.event(ref, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pv.metadata.name}`);
  }

  /** Upstream's volume.kubernetes.io/storage-provisioner annotation (svc spelling): who is to provision the claim. */
  private async markProvisioner(claim: KObject, provisioner: string): Promise<void> {
    if (annotation(claim, ANN_STORAGE_PROVISIONER) === provisioner) return;
    try {
      await this.store.update(this.t.claims, claim.metadata.namespace ?? '', claim.metadata.name ?? '', (cur) => {
        if (!cur || cur.metadata.uid !== claim.metadata.uid) return cur ?? claim;
        cur.metadata.annotations = { ...cur.metadata.annotations, [ANN_STORAGE_PROVISIONER]: provisioner };
        delete cur.metadata.resourceVersion;
        return cur;
      }, binderCtx);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** Upstream syncVolume: Available without a claim, Bound with its claim, Released (then reclaimed) once the claim is gone. */
  async syncVolume(name: string): Promise<void> {
    const pv = this.volumes.get(name);
    if (!pv || pv.metadata.deletionTimestamp) return;
    const ref = rec(get(pv, 'spec', 'claimRef'));
    if (!ref) {
      await setVolumePhase(this.store, this.t, name, 'Available', undefined, this.opts.now);
      return;
    }
    const claimKey = `${str(ref.namespace)}/${str(ref.name)}`;
    if (!str(ref.uid)) {
      // Pre-bound by its creator to a claim that may not exist yet: the claim's sync binds it.
      await setVolumePhase(this.store, this.t, name, 'Available', undefined, this.opts.now);
      return;
    }
    let claim = this.claims.get(claimKey);
    if (!claim || claim.metadata.uid !== str(ref.uid)) {
      // The cache may lag: ask the store before releasing (upstream does the same).
      claim = await this.store.get(this.t.claims, str(ref.namespace) ?? '', str(ref.name) ?? '').catch((err) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
    }
    if (claim && claim.metadata.uid === str(ref.uid)) {
      const bound = strAt(claim, 'spec', 'volumeName');
      if (bound === '') return; // binding in progress: the claim's sync finishes it
      if (bound === name) {
        if (strAt(pv, 'status', 'phase') !== 'Bound') await setVolumePhase(this.store, this.t, name, 'Bound', undefined, this.opts.now);
        return;
      }
      // The claim went to another volume: undo what the controller did here.
      await unbindVolume(this.store, this.t, pv);
      return;
    }
    await this.reclaim(pv);
  }

  /** Upstream reclaimVolume: Retain keeps it Released; Delete removes it; Recycle is not supported here. */
  private async reclaim(pv: KObject): Promise<void> {
    const name = pv.metadata.name ?? '';
    const policy = strAt(pv, 'spec', 'persistentVolumeReclaimPolicy') || 'Retain';
    if (strAt(pv, 'status', 'phase') !== 'Released' && strAt(pv, 'status', 'phase') !== 'Failed') {
      await setVolumePhase(this.store, this.t, name, 'Released', undefined, this.opts.now);
    }
    if (policy === RECLAIM_DELETE) {
      // Upstream keeps a claim in use by a pod (its pvc-protection finalizer) until the pod is
      // gone; svc has no such finalizer, so the volume waits here instead: a pod still running
      // with the deleted claim keeps its data until it ends.
      const ref = rec(get(pv, 'spec', 'claimRef')) ?? {};
      const users = this.podsUsing(`${str(ref.namespace)}/${str(ref.name)}`);
      if (users.length > 0) {
        this.opts.log.info({ volume: name, pods: users.map((p) => p.metadata.name) }, 'released volume still used by pods; deleting it once they end');
        return;
      }
      try {
        await this.store.delete(this.t.volumes, '', name, { preconditions: { uid: pv.metadata.uid } }, binderCtx);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return;
    }
    if (policy === 'Recycle' && strAt(pv, 'status', 'phase') !== 'Failed') {
      await setVolumePhase(this.store, this.t, name, 'Failed', 'svc does not recycle volumes; delete or re-bind it by hand', this.opts.now);
      this.recorder.event(referenceTo(pv, volumeRef), 'Warning', 'VolumeFailedRecycle', 'Recycle is not supported: the volume stays Failed until it is deleted or re-bound by hand');
    }
  }
}
