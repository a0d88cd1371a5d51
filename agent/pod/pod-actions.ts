/**
 * What one sync must do to bring the runtime to the pod's spec: upstream's kuberuntime
 * computePodActions, podSandboxChanged, findNextInitContainerToRun and ShouldContainerBeRestarted,
 * as a pure function of the spec, the runtime state and the probe results.
 */
import type { Container, Pod } from '../api/core-v1';
import { containerHash } from './runtime-labels';
import type { RuntimeContainer, RuntimePod } from './runtime-pod';

export interface ContainerToKill {
  id: string;
  name: string;
  /** Why, for logs and events ("Container x failed liveness probe, will be restarted"). */
  message: string;
  /** Grace period override (a failed probe's terminationGracePeriodSeconds). */
  graceSeconds?: number;
}

export interface PodActions {
  /** Stop every container and the sandbox. */
  killPod: boolean;
  createSandbox: boolean;
  /** Attempt number for a new sandbox. */
  sandboxAttempt: number;
  /** The ready sandbox to use when not creating one. */
  sandboxId?: string;
  nextInitContainer?: Container;
  containersToStart: Container[];
  containersToKill: ContainerToKill[];
  /**
   * Ephemeral containers to start: those the runtime has never had, once the sandbox exists (upstream
   * starts them even before initialization is done, and never restarts them).
   */
  ephemeralToStart: EphemeralContainer[];
}

export type EphemeralContainer = NonNullable<Pod['spec']['ephemeralContainers']>[number];

/** Probe verdicts the actions depend on, by container ID. */
export interface ProbeVerdicts {
  /** True when the container's liveness probe has failed (it must be killed). */
  livenessFailed(containerId: string): boolean;
  /** True when the container's startup probe has failed (it must be killed). */
  startupFailed(containerId: string): boolean;
}

export function shouldRestartOnFailure(pod: Pod): boolean {
  return (pod.spec.restartPolicy ?? 'Always') !== 'Never';
}

/** The newest container of that name (init and regular containers share one name space in a pod). */
export function latestByName(rp: RuntimePod, name: string): RuntimeContainer | undefined {
  return rp.containers.find((c) => c.name === name);
}

function succeeded(rp: RuntimePod, c: Container): boolean {
  const s = latestByName(rp, c.name);
  return s !== undefined && s.state === 'CONTAINER_EXITED' && s.exitCode === 0;
}

function initFailed(s: RuntimeContainer): boolean {
  return (s.state === 'CONTAINER_EXITED' && s.exitCode !== 0) || s.state === 'CONTAINER_UNKNOWN';
}

/** Upstream ShouldContainerBeRestarted. */
export function shouldBeRestarted(pod: Pod, c: Container, rp: RuntimePod): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  const s = latestByName(rp, c.name);
  if (!s) return true;
  if (s.state === 'CONTAINER_RUNNING') return false;
  if (s.state === 'CONTAINER_UNKNOWN' || s.state === 'CONTAINER_CREATED') return true;
  const policy = pod.spec.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && s.exitCode === 0) return false;
  return true;
}

/** Upstream findNextInitContainerToRun: the last status seen, the next init container, and whether initialization is done. */
export function nextInitContainer(pod: Pod, rp: RuntimePod): { last?: RuntimeContainer; next?: Container; done: boolean } {
  const inits = pod.spec.initContainers ?? [];
  if (inits.length === 0) return { done: true };
  for (const c of pod.spec.containers) {
    if (latestByName(rp, c.name)?.state === 'CONTAINER_RUNNING') return { done: true };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const s = latestByName(rp, inits[i].name);
    if (s && initFailed(s)) return { last: s, next: inits[i], done: false };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const s = latestByName(rp, inits[i].name);
    if (!s) continue;
    if (s.state === 'CONTAINER_RUNNING') return { done: false };
    if (s.state === 'CONTAINER_EXITED') {
      if (i === inits.length - 1) return { done: true };
      return { next: inits[i + 1], done: false };
    }
  }
  return { next: inits[0], done: false };
}

/** Upstream podSandboxChanged: whether a new sandbox is needed, its attempt, and the current one. */
export function sandboxChanged(pod: Pod, rp: RuntimePod): { create: boolean; attempt: number; sandboxId?: string } {
  const newest = rp.sandboxes[0];
  if (!newest) return { create: true, attempt: 0 };
  const ready = rp.sandboxes.filter((s) => s.state === 'SANDBOX_READY').length;
  const next = { create: true, attempt: newest.attempt + 1, sandboxId: newest.id };
  if (ready > 1 || newest.state !== 'SANDBOX_READY') return next;
  if (newest.hostNetwork !== (pod.spec.hostNetwork === true)) return next;
  if (!pod.spec.hostNetwork && newest.ips.length === 0) return next;
  return { create: false, attempt: newest.attempt, sandboxId: newest.id };
}

export function computePodActions(pod: Pod, rp: RuntimePod, probes: ProbeVerdicts): PodActions {
  const sb = sandboxChanged(pod, rp);
  const actions: PodActions = {
    killPod: sb.create,
    createSandbox: sb.create,
    sandboxAttempt: sb.attempt,
    containersToStart: [],
    containersToKill: [],
    ephemeralToStart: [],
  };
  if (sb.sandboxId) actions.sandboxId = sb.sandboxId;
  if (!sb.create && !pod.metadata.deletionTimestamp) actions.ephemeralToStart = (pod.spec.ephemeralContainers ?? []).filter((c) => !latestByName(rp, c.name));

  if (sb.create) {
    // A pod that must not restart and has already run stays down (upstream).
    if (!shouldRestartOnFailure(pod) && sb.attempt !== 0 && rp.containers.length !== 0) {
      actions.createSandbox = false;
      return actions;
    }
    const toStart = pod.spec.containers.filter((c) => !((pod.spec.restartPolicy ?? 'Always') === 'OnFailure' && succeeded(rp, c)));
    if (toStart.length === 0 && nextInitContainer(pod, rp).done) {
      actions.createSandbox = false;
      return actions;
    }
    const inits = pod.spec.initContainers ?? [];
    if (inits.length > 0) {
      actions.nextInitContainer = inits[0];
      return actions;
    }
    actions.containersToStart = toStart;
    return actions;
  }

  const init = nextInitContainer(pod, rp);
  if (!init.done) {
    if (init.next) {
      if (init.last && initFailed(init.last) && !shouldRestartOnFailure(pod)) {
        actions.killPod = true;
      } else {
        if (init.last?.state === 'CONTAINER_UNKNOWN') {
          actions.containersToKill.push({ id: init.last.id, name: init.last.name, message: `Init container ${init.last.name} is in an unknown state, will be restarted` });
        }
        actions.nextInitContainer = init.next;
      }
    }
    return actions;
  }

  let keep = 0;
  for (const c of pod.spec.containers) {
    const s = latestByName(rp, c.name);
    if (!s || s.state !== 'CONTAINER_RUNNING') {
      if (shouldBeRestarted(pod, c, rp)) {
        actions.containersToStart.push(c);
        if (s && (s.state === 'CONTAINER_UNKNOWN' || s.state === 'CONTAINER_CREATED')) {
          actions.containersToKill.push({ id: s.id, name: s.name, message: `Container ${c.name} is not running, will be restarted` });
        }
      }
      continue;
    }
    let restart = shouldRestartOnFailure(pod);
    let message: string;
    let graceSeconds: number | undefined;
    if (s.hash !== '' && s.hash !== containerHash(c)) {
      message = `Container ${c.name} definition changed`;
      restart = true;
    } else if (probes.livenessFailed(s.id)) {
      message = `Container ${c.name} failed liveness probe`;
      graceSeconds = c.livenessProbe?.terminationGracePeriodSeconds;
    } else if (probes.startupFailed(s.id)) {
      message = `Container ${c.name} failed startup probe`;
      graceSeconds = c.startupProbe?.terminationGracePeriodSeconds;
    } else {
      keep++;
      continue;
    }
    if (restart) {
      message += ', will be restarted';
      actions.containersToStart.push(c);
    }
    const kill: ContainerToKill = { id: s.id, name: s.name, message };
    if (graceSeconds !== undefined) kill.graceSeconds = graceSeconds;
    actions.containersToKill.push(kill);
  }
  // Containers the spec no longer names (cannot happen through the API; a static pod edited in place can).
  const names = new Set([...pod.spec.containers, ...(pod.spec.initContainers ?? []), ...(pod.spec.ephemeralContainers ?? [])].map((c) => c.name));
  for (const s of rp.containers) {
    if (s.state === 'CONTAINER_RUNNING' && !names.has(s.name)) actions.containersToKill.push({ id: s.id, name: s.name, message: `Container ${s.name} is not in the pod's spec` });
  }
  if (keep === 0 && actions.containersToStart.length === 0) actions.killPod = true;
  return actions;
}
