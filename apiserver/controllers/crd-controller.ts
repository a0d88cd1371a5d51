import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import { isConflict, isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import { rfc3339 } from '../api/time';
import type { ConversionTransport } from '../registry/crd/conversion-webhook';
import { customResourceTypes, type CustomResourceVersion } from '../registry/crd/custom-type';
import type { ResourceRegistry } from '../registry/builtin';
import { arr, rec, str } from '../registry/obj-access';
import { apiVersionOf, type ResourceType } from '../registry/resource-type';
import { CRD_CLEANUP_FINALIZER, CRD_GROUP, crdCondition } from '../registry/types/customresourcedefinitions';
import { StoreInformers, waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';
import type { WatchCache } from '../store/watch-cache';
import { namesConflict } from './crd-names';

const ctx = controllerContext('customresourcedefinition');
const statusCtx = { ...ctx, subresource: 'status' };
const everything = { labelSelector: [], fieldSelector: [] };

export interface CrdControllerOptions {
  log: Logger;
  informers?: StoreInformers;
  now?: () => Date;
  /** Told of the served versions of each established CRD and of each CRD removed (deprecation warnings). */
  onServed?: (crdName: string, versions: readonly CustomResourceVersion[]) => void;
  /** How conversion webhooks are called; absent: a Webhook CRD serves only its storage version. */
  conversion?: ConversionTransport;
}

/**
 * Upstream apiextensions-apiserver's controllers in one loop over CustomResourceDefinitions
 * (informer + work queue), run by every svc-apiserver as upstream runs them in every
 * kube-apiserver, since each process serves the types:
 * - naming (NamingConditionController): the names are accepted unless another CRD of the group,
 *   or a built-in type of it, already uses the plural, singular, a short name, the kind or the
 *   list kind; NamesAccepted True (NoConflicts) or False (NameConflict / KindConflict), and
 *   status.acceptedNames;
 * - establishing: Established True (InitialNamesAccepted) once the names are accepted, after
 *   which the served versions are registered in the ResourceRegistry (and so in discovery,
 *   OpenAPI, the handlers and the garbage collector); a changed CRD replaces its types;
 * - finalizer (the customresourcecleanup.apiextensions.k8s.io finalizer, added to every CRD): a
 *   deleted CRD is marked Terminating, its objects are deleted, and only once none is left is the
 *   finalizer removed; the types stop being served when the CRD is gone.
 */
export class CrdController {
  private readonly informers: StoreInformers;
  /** CRD name → the types it registered. */
  private readonly served = new Map<string, ResourceType[]>();
  /** CRD name → the spec its types were built from (a status-only change rebuilds nothing). */
  private readonly servedSpec = new Map<string, string>();
  private readonly now: () => Date;

  constructor(
    private readonly store: ObjectStore,
    cache: WatchCache,
    private readonly registry: ResourceRegistry,
    private readonly opts: CrdControllerOptions,
  ) {
    this.informers = opts.informers ?? new StoreInformers(store, cache, { log: opts.log });
    this.now = opts.now ?? (() => new Date());
  }

  private crdType(): ResourceType {
    const t = this.registry.lookup(CRD_GROUP, 'v1', 'customresourcedefinitions');
    if (!t) throw new Error('customresourcedefinitions type not registered');
    return t;
  }

  async run(signal: AbortSignal): Promise<void> {
    const crds = this.informers.informer(this.crdType());
    const queue = new WorkQueue();
    const enqueueGroup = (o: KObject) => {
      // A CRD's names free or take names of the others of its group.
      const group = str(rec(o.spec)?.group);
      for (const other of crds.store.list()) if (str(rec(other.spec)?.group) === group) queue.add(other.metadata.name!);
      queue.add(o.metadata.name!);
    };
    crds.addEventHandler({ onAdd: enqueueGroup, onUpdate: (_o, n) => enqueueGroup(n), onDelete: enqueueGroup }, { signal });
    this.informers.start(signal);
    if (!(await waitForCacheSync(signal, crds))) return;
    await runWorkers(queue, (name) => this.sync(name, crds.store.list(), queue), signal, {
      onError: (name, err) => this.opts.log.warn({ err, crd: name }, 'syncing the CustomResourceDefinition failed; retrying'),
    });
  }

  /** One CRD: its conditions, its finalizer, its served types, or its cleanup once deleted. */
  async sync(name: string, all: readonly KObject[], queue?: WorkQueue): Promise<void> {
    const crd = all.find((c) => c.metadata.name === name);
    if (!crd) return this.stopServing(name);
    if (crd.metadata.deletionTimestamp) return this.cleanUp(crd, queue);
    if (!(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) {
      await this.store.update(this.crdType(), '', name, (cur) => (cur ? withFinalizer(cur) : cur!), ctx).catch(ignoreGone);
      return;
    }
    const conflict = namesConflict(crd, all, this.registry);
    const next = structuredClone(crd);
    const status = (rec(next.status) ?? {}) as Record<string, unknown>;
    next.status = status;
    if (conflict) {
      setCondition(next, { type: 'NamesAccepted', status: 'False', reason: conflict.reason, message: conflict.message }, this.now());
      if (crdCondition(crd, 'Established')?.status !== 'True') setCondition(next, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, this.now());
    } else {
      status.acceptedNames = structuredClone(rec(rec(crd.spec)?.names) ?? {});
      setCondition(next, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, this.now());
      setCondition(next, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, this.now());
    }
    let current = crd;
    if (JSON.stringify(next.status) !== JSON.stringify(crd.status)) {
      try {
        current = (await this.store.update(this.crdType(), '', name, () => ({ ...next, metadata: { ...next.metadata } }), statusCtx)).object;
      } catch (err) {
        if (isConflict(err) || isNotFound(err)) return; // the informer brings the newer version
        throw err;
      }
    }
    if (crdCondition(current, 'Established')?.status === 'True' && crdCondition(current, 'NamesAccepted')?.status === 'True') this.serve(current);
  }

  /** Registers (or replaces) the CRD's served versions; versions no longer served go. */
  private serve(crd: KObject): void {
    const name = crd.metadata.name!;
    const spec = JSON.stringify(crd.spec);
    if (this.servedSpec.get(name) === spec) return;
    this.servedSpec.set(name, spec);
    const versions = customResourceTypes(crd, undefined, this.opts.conversion);
    const before = this.served.get(name) ?? [];
    const keep = new Set(versions.map((v) => `${v.type.group}/${v.type.version}/${v.type.resource}`));
    for (const t of before) if (!keep.has(`${t.group}/${t.version}/${t.resource}`)) this.registry.unregister(t.group, t.version, t.resource);
    const registered: ResourceType[] = [];
    for (const v of versions) {
      const existing = this.registry.lookup(v.type.group, v.type.version, v.type.resource);
      // Never over a built-in type (or another CRD's): the names check keeps a group's names apart.
      if (existing && !before.includes(existing)) continue;
      this.registry.replace(v.type);
      registered.push(v.type);
    }
    this.served.set(name, registered);
    this.opts.onServed?.(name, versions);
    this.opts.log.info({ crd: name, versions: registered.map(apiVersionOf) }, 'serving custom resource');
  }

  private stopServing(name: string): void {
    for (const t of this.served.get(name) ?? []) {
      if (this.registry.lookup(t.group, t.version, t.resource) === t) this.registry.unregister(t.group, t.version, t.resource);
    }
    this.servedSpec.delete(name);
    if (this.served.delete(name)) this.opts.log.info({ crd: name }, 'custom resource no longer served');
    this.opts.onServed?.(name, []);
  }

  /** Deletes every object of a deleted CRD, then takes its finalizer off (upstream's CRDFinalizer). */
  private async cleanUp(crd: KObject, queue?: WorkQueue): Promise<void> {
    const name = crd.metadata.name!;
    if (!(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return;
    if (crdCondition(crd, 'Terminating')?.status !== 'True') {
      const next = structuredClone(crd);
      setCondition(next, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }, this.now());
      await this.store.update(this.crdType(), '', name, () => next, statusCtx).catch(ignoreGone);
    }
    // Any version reads every object: they share their storage keys. The storage version needs no
    // conversion of what it wrote itself.
    const types = customResourceTypes(crd, undefined, this.opts.conversion);
    const storage = str(arr(rec(crd.spec)?.versions).map((v) => rec(v) ?? {}).find((v) => v.storage === true)?.name);
    const t = types.find((v) => v.type.version === storage)?.type ?? types.find((v) => !v.type.storedAs)?.type ?? types[0]?.type;
    let remaining = 0;
    if (t) {
      const items = (await this.store.list(t, '', everything)).items;
      remaining = items.length;
      for (const obj of items) {
        if (obj.metadata.deletionTimestamp) continue;
        await this.store.delete(t, obj.metadata.namespace ?? '', obj.metadata.name!, { propagationPolicy: 'Background' }, ctx).catch(ignoreGone);
      }
    }
    if (remaining > 0) {
      queue?.addAfter(name, 1000);
      return;
    }
    this.stopServing(name);
    await this.store
      .update(this.crdType(), '', name, (cur) => {
        if (!cur) return cur!;
        return { ...cur, metadata: { ...cur.metadata, finalizers: (cur.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER) } };
      }, ctx)
      .catch(ignoreGone);
  }
}

function withFinalizer(crd: KObject): KObject {
  if ((crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return crd;
  return { ...crd, metadata: { ...crd.metadata, finalizers: [...(crd.metadata.finalizers ?? []), CRD_CLEANUP_FINALIZER] } };
}

function ignoreGone(err: unknown): void {
  if (!isNotFound(err) && !isConflict(err)) throw err;
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** Sets a condition, keeping lastTransitionTime while its status stays. */
function setCondition(crd: KObject, c: Condition, now: Date): void {
  const status = (rec(crd.status) ?? {}) as Record<string, unknown>;
  crd.status = status;
  const list = arr(status.conditions).map((x) => rec(x) ?? {});
  const i = list.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? list[i] : undefined;
  const time = prev && prev.status === c.status ? prev.lastTransitionTime : rfc3339(now);
  const next = { type: c.type, status: c.status, lastTransitionTime: time, reason: c.reason, message: c.message };
  if (i >= 0) list[i] = next;
  else list.push(next);
  status.conditions = list;
}
