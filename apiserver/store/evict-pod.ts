import { ApiError, errors, isConflict } from '../api/errors';
import { rfc3339 } from '../api/time';
import type { KObject } from '../api/types';
import { rec, str } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import { podCondition, setPodCondition } from '../registry/types/pod-conditions';
import { DISRUPTION_BUDGET_CAUSE, disruptedPods, pdbCounts, pdbCoversPod, updateDisruptionAllowedCondition } from '../registry/types/pdb-status';
import type { DeleteOptions, ObjectStore, WriteContext } from './object-store';

/**
 * The eviction of one pod (POST pods/{name}/eviction), as upstream's EvictionREST.Create
 * (pkg/registry/core/pod/storage/eviction.go): a pod that is terminal, Pending or already
 * terminating is deleted without looking at budgets; otherwise the one PodDisruptionBudget
 * covering it must allow a disruption, which is taken (status.disruptionsAllowed - 1, the pod
 * recorded in status.disruptedPods) before the pod gets the DisruptionTarget condition and is
 * deleted with the eviction's DeleteOptions. Several budgets covering the pod is upstream's 500.
 */

/** Upstream MaxDisruptedPodSize: more unconfirmed evictions than this and the budget refuses (403). */
export const MAX_DISRUPTED_PODS = 2000;
/** Upstream EvictionsRetry.Steps: attempts at the terminal-pod delete when it keeps conflicting. */
const EVICTION_ATTEMPTS = 20;
const BUDGET_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

export interface EvictionTypes {
  pods: ResourceType;
  podDisruptionBudgets: ResourceType;
}

export interface EvictionRequest {
  namespace: string;
  name: string;
  /** The eviction's DeleteOptions (dry run apart). */
  options: DeleteOptions;
  dryRun: boolean;
  /** Who evicts (admission of the writes sees them; authorization was pods/eviction create). */
  ctx: WriteContext;
}

/** What an eviction answers when it does not throw: done (201 Success), or upstream's 500 Status for several budgets. */
export type EvictionOutcome = { evicted: true } | { evicted: false; code: 500; message: string };

/** Upstream takes the disruption through its loopback client: the budget's status is written by the API server itself, not the evicting user. */
const BUDGET_WRITER: WriteContext = { user: { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] }, dryRun: false, fieldManager: 'svc-apiserver', subresource: 'status' };

const MULTIPLE_BUDGETS = 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.';

/** Evicts the pod; throws ApiErrors with upstream's codes (404 pod, 429 budget, 403, 409 preconditions). */
export async function evictPod(store: ObjectStore, types: EvictionTypes, req: EvictionRequest, now: () => Date): Promise<EvictionOutcome> {
  const pod = await deleteIfBudgetsDoNotApply(store, types, req, now);
  if (!pod) return { evicted: true };
  const pdbs = (await store.list(types.podDisruptionBudgets, req.namespace, { labelSelector: [], fieldSelector: [] })).items.filter((b) => pdbCoversPod(b, pod));
  if (pdbs.length > 1) return { evicted: false, code: 500, message: MULTIPLE_BUDGETS };
  let options = req.options;
  let unhealthyDelete = false;
  if (pdbs.length === 1) {
    const pdb = pdbs[0];
    unhealthyDelete = !isReady(pod) && unhealthyMayGo(pdb);
    if (!unhealthyDelete) await takeDisruption(store, types.podDisruptionBudgets, pdb, req, now);
  }
  // An unhealthy pod let go without taking a disruption must still be unready when it is deleted.
  if (unhealthyDelete) options = withResourceVersion(options, pod.metadata.resourceVersion);
  try {
    await addConditionAndDelete(store, types.pods, req, options, now, false);
  } catch (err) {
    if (isConflict(err) && unhealthyDelete && !req.options.preconditions?.resourceVersion) throw stillProcessing(pdbs[0].metadata.name ?? '');
    throw err;
  }
  return { evicted: true };
}

/**
 * The first phase of upstream's Create: reads the pod and, when budgets do not apply to it
 * (terminal, Pending, or already terminating), deletes it and answers null; else answers the pod.
 * A conflicting delete is retried with a fresh read unless the caller pinned a resourceVersion.
 */
async function deleteIfBudgetsDoNotApply(store: ObjectStore, types: EvictionTypes, req: EvictionRequest, now: () => Date): Promise<KObject | null> {
  const pinned = !!req.options.preconditions?.resourceVersion;
  for (let attempt = 1; ; attempt++) {
    const pod = await store.get(types.pods, req.namespace, req.name);
    if (!budgetsDoNotApply(pod)) return pod;
    let options = req.options;
    // Racing a pod that turns Running (and healthy) meanwhile must fail, not skip its budget.
    if (!terminalOrTerminating(pod) && !pinned) options = withResourceVersion(options, pod.metadata.resourceVersion);
    try {
      await addConditionAndDelete(store, types.pods, req, options, now, !!pod.metadata.deletionTimestamp);
      return null;
    } catch (err) {
      if (!isConflict(err) || pinned || attempt >= EVICTION_ATTEMPTS) throw err;
    }
  }
}

function phase(pod: KObject): string {
  return str(rec(pod.status)?.phase) ?? '';
}

function terminalOrTerminating(pod: KObject): boolean {
  const p = phase(pod);
  return p === 'Succeeded' || p === 'Failed' || !!pod.metadata.deletionTimestamp;
}

/** Upstream canIgnorePDB: the pod already caused its disruption, or never counted. */
function budgetsDoNotApply(pod: KObject): boolean {
  return terminalOrTerminating(pod) || phase(pod) === 'Pending';
}

/** Upstream podutil.IsPodReady, the current meaning of healthy. */
function isReady(pod: KObject): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

/**
 * spec.unhealthyPodEvictionPolicy for a pod that is not ready: AlwaysAllow lets it go; the
 * default IfHealthyBudget only while the application is healthy (currentHealthy ≥ desiredHealthy
 * > 0). Either way no disruption is taken: an unready pod does not count as healthy.
 */
function unhealthyMayGo(pdb: KObject): boolean {
  if (rec(pdb.spec)?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return true;
  const c = pdbCounts(pdb);
  return c.currentHealthy >= c.desiredHealthy && c.desiredHealthy > 0;
}

function withResourceVersion(options: DeleteOptions, resourceVersion: string | undefined): DeleteOptions {
  return { ...options, preconditions: { ...options.preconditions, resourceVersion } };
}

/** 429 with the budget named, while the controller has not caught up (upstream createTooManyRequestsError: retry after 10 s). */
function stillProcessing(pdbName: string): ApiError {
  return new ApiError('TooManyRequests', BUDGET_MESSAGE, {
    retryAfterSeconds: 10,
    causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: `The disruption budget ${pdbName} is still being processed by the server.` }],
  });
}

function budgetForbids(pdbName: string, why: string): ApiError {
  return errors.forbidden(`poddisruptionbudget.policy "${pdbName}" is forbidden: ${why}`);
}

/**
 * Upstream checkAndDecrement, on the budget as stored (the store's update re-reads it and runs
 * this again when another eviction wrote it first: upstream's RetryOnConflict with a refresh).
 * Throws 429 while the budget's status is stale or allows nothing; in a dry run only checks.
 */
async function takeDisruption(store: ObjectStore, pdbType: ResourceType, listed: KObject, req: EvictionRequest, now: () => Date): Promise<void> {
  const name = listed.metadata.name ?? '';
  const take = (pdb: KObject): KObject => {
    const c = pdbCounts(pdb);
    if (c.observedGeneration < (pdb.metadata.generation ?? 0)) throw stillProcessing(name);
    if (c.disruptionsAllowed < 0) throw budgetForbids(name, 'pdb disruptions allowed is negative');
    const disrupted = disruptedPods(pdb);
    if (Object.keys(disrupted).length > MAX_DISRUPTED_PODS) throw budgetForbids(name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
    if (c.disruptionsAllowed === 0) {
      throw new ApiError('TooManyRequests', BUDGET_MESSAGE, {
        causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message: `The disruption budget ${name} needs ${c.desiredHealthy} healthy pods and has ${c.currentHealthy} currently` }],
      });
    }
    const status = { ...rec(pdb.status), disruptionsAllowed: c.disruptionsAllowed - 1, disruptedPods: { ...disrupted, [req.name]: rfc3339(now()) } };
    const next: KObject = { ...pdb, status };
    if (c.disruptionsAllowed - 1 === 0) updateDisruptionAllowedCondition(next, now());
    delete next.metadata.resourceVersion;
    return next;
  };
  if (req.dryRun) {
    take(await store.get(pdbType, req.namespace, name));
    return;
  }
  await store.update(pdbType, req.namespace, name, (current) => {
    if (!current) throw errors.notFound(pdbType.resource, name, pdbType.group);
    return take(current);
  }, BUDGET_WRITER);
}

/**
 * Upstream addConditionAndDeletePod: unless a dry run, the pod first gets DisruptionTarget=True
 * (reason EvictionByEvictionAPI) through its status, checked against the delete's preconditions
 * on the latest pod; a resourceVersion precondition then moves to the version that write made.
 * Then the delete with the eviction's options.
 */
async function addConditionAndDelete(store: ObjectStore, podType: ResourceType, req: EvictionRequest, options: DeleteOptions, now: () => Date, terminating: boolean): Promise<void> {
  let opts = options;
  // Where we differ: upstream also marks a pod that is already terminating. Here any update of a
  // terminating object without finalizers completes its deletion (store/deleter.ts
  // deleteIfFinalized), which would cut the pod's grace period short; it goes anyway.
  if (!req.dryRun && !terminating) {
    const pre = options.preconditions;
    const { object } = await store.update(
      podType,
      req.namespace,
      req.name,
      (current) => {
        if (!current) throw errors.notFound(podType.resource, req.name);
        if (pre?.uid && pre.uid !== current.metadata.uid) {
          throw errors.conflict('Pod', req.name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${current.metadata.uid ?? ''}). The object might have been deleted and then recreated`);
        }
        if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
          throw errors.conflict('Pod', req.name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${current.metadata.resourceVersion ?? ''}). The object might have been modified`);
        }
        setPodCondition(current, { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' }, now());
        delete current.metadata.resourceVersion;
        return current;
      },
      { ...req.ctx, dryRun: false, subresource: 'status' },
    );
    if (pre?.resourceVersion) opts = withResourceVersion(options, object.metadata.resourceVersion);
  }
  await store.delete(podType, req.namespace, req.name, opts, { ...req.ctx, dryRun: req.dryRun, subresource: '' });
}
