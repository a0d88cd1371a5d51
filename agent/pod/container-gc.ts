/**
 * Garbage collection of dead containers and sandboxes of live pods, as upstream's container GC
 * with MaxPerPodContainer=1 and MinAge=0: per pod and container name the newest container is
 * kept (the restart count and the waiting state read it) plus the newest exited one before it
 * (lastState); older exited containers are removed. Not-ready sandboxes other than a pod's newest
 * are removed once they hold no containers. Containers and sandboxes of pods the agent no longer
 * knows are the housekeeping's (./housekeeping), not this.
 */
import type { Container, PodSandbox } from '../cri';
import { CONTAINER_NAME, POD_UID } from './runtime-labels';

export interface GcPlan {
  containers: string[];
  sandboxes: string[];
}

/** Which dead containers and sandboxes of `liveUids` to remove. Pure. */
export function planContainerGc(containers: readonly Container[], sandboxes: readonly PodSandbox[], liveUids: ReadonlySet<string>): GcPlan {
  const plan: GcPlan = { containers: [], sandboxes: [] };
  const groups = new Map<string, Container[]>();
  for (const c of containers) {
    const uid = c.labels[POD_UID];
    if (!uid || !liveUids.has(uid)) continue;
    const k = `${uid}/${c.labels[CONTAINER_NAME] ?? c.metadata.name}`;
    const g = groups.get(k);
    if (g) g.push(c);
    else groups.set(k, [c]);
  }
  for (const g of groups.values()) {
    g.sort((a, b) => b.metadata.attempt - a.metadata.attempt || b.createdAt - a.createdAt);
    let keptDead = false;
    for (const [i, c] of g.entries()) {
      if (i === 0 || c.state === 'CONTAINER_RUNNING') continue;
      if (c.state === 'CONTAINER_EXITED' && !keptDead) {
        keptDead = true;
        continue;
      }
      if (c.state === 'CONTAINER_EXITED' || c.state === 'CONTAINER_CREATED' || c.state === 'CONTAINER_UNKNOWN') plan.containers.push(c.id);
    }
  }
  const removed = new Set(plan.containers);
  const bySandbox = new Map<string, number>();
  for (const c of containers) if (!removed.has(c.id)) bySandbox.set(c.podSandboxId, (bySandbox.get(c.podSandboxId) ?? 0) + 1);
  const podSandboxes = new Map<string, PodSandbox[]>();
  for (const s of sandboxes) {
    const uid = s.labels[POD_UID];
    if (!uid || !liveUids.has(uid)) continue;
    const list = podSandboxes.get(uid);
    if (list) list.push(s);
    else podSandboxes.set(uid, [s]);
  }
  for (const list of podSandboxes.values()) {
    list.sort((a, b) => b.metadata.attempt - a.metadata.attempt || b.createdAt - a.createdAt);
    for (const s of list.slice(1)) if (s.state === 'SANDBOX_NOTREADY' && !bySandbox.get(s.id)) plan.sandboxes.push(s.id);
  }
  return plan;
}
