/**
 * The pod's API status from its runtime state, as upstream's kubelet generateAPIPodStatus,
 * convertToAPIContainerStatuses and getPhase: containerStatuses (state, lastState, restartCount,
 * ready, started, image, imageID, containerID), the phase from counting running, waiting and
 * stopped containers, the Initialized / Ready / ContainersReady / PodScheduled conditions with
 * upstream's reasons and messages, pod and host IPs, and the start time. Pure: every input is a
 * parameter, so the same state always gives the same status.
 */
import type { Container, ContainerState, ContainerStatus, Pod, PodCondition, PodPhase, PodStatus } from '../api/core-v1';
import { shouldBeRestarted } from './pod-actions';
import { podQos } from './resources';
import type { RuntimeContainer, RuntimePod } from './runtime-pod';
import { Reasons } from './sync-errors';

export interface StatusInput {
  pod: Pod;
  runtime: RuntimePod;
  /** Why containers are not running, from the last sync (CrashLoopBackOff, ErrImagePull ...), by container name. */
  waiting: ReadonlyMap<string, { reason: string; message: string }>;
  /** Readiness and startup verdicts by container ID. */
  ready(containerId: string, c: Container): boolean;
  started(containerId: string, c: Container): boolean;
  hostIPs: readonly string[];
  /** When the agent first saw the pod (ms). */
  startTime: number;
  /** "containerd", "svc-sim" ...: the containerID prefix. */
  runtimeName: string;
  /** The pod is being torn down and nothing runs any more: Succeeded or Failed (upstream podIsTerminal). */
  terminal: boolean;
  /** The status the API holds now, for transition times and for keeping a terminal phase. */
  previous?: PodStatus;
  /** Overrides for a pod failed by the agent itself (activeDeadlineSeconds). */
  failure?: { reason: string; message: string };
  now: number;
}

/** RFC 3339 with seconds, as metav1.Time serialises. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function terminatedState(rc: RuntimeContainer, runtimeName: string): ContainerState {
  const reason = rc.reason || (rc.exitCode === 0 ? Reasons.Completed : Reasons.Error);
  const t: NonNullable<ContainerState['terminated']> = {
    exitCode: rc.exitCode,
    reason,
    startedAt: rc.startedAt ? rfc3339(rc.startedAt) : undefined,
    finishedAt: rc.finishedAt ? rfc3339(rc.finishedAt) : undefined,
    containerID: `${runtimeName}://${rc.id}`,
  };
  const message = rc.terminationMessage ?? rc.message;
  if (message) t.message = message;
  if (t.startedAt === undefined) delete t.startedAt;
  if (t.finishedAt === undefined) delete t.finishedAt;
  return { terminated: t };
}

function containerStatuses(input: StatusInput, specs: Container[], defaultReason: string): ContainerStatus[] {
  const { pod, runtime, runtimeName } = input;
  return specs.map((c) => {
    const all = runtime.containers.filter((r) => r.name === c.name);
    const cur = all[0];
    const prev = all[1];
    const status: ContainerStatus = {
      name: c.name,
      state: { waiting: { reason: defaultReason } },
      lastState: {},
      ready: false,
      restartCount: 0,
      image: c.image ?? '',
      imageID: '',
      started: false,
    };
    if (cur) {
      status.containerID = `${runtimeName}://${cur.id}`;
      status.image = cur.image || c.image || '';
      status.imageID = cur.imageRef;
      status.restartCount = cur.attempt;
      switch (cur.state) {
        case 'CONTAINER_RUNNING':
          status.state = { running: { startedAt: rfc3339(cur.startedAt || cur.createdAt) } };
          status.started = input.started(cur.id, c);
          status.ready = status.started && input.ready(cur.id, c);
          break;
        case 'CONTAINER_EXITED':
          status.state = terminatedState(cur, runtimeName);
          break;
        default:
          status.state = { waiting: { reason: Reasons.ContainerCreating } };
      }
      if (prev && prev.state === 'CONTAINER_EXITED') status.lastState = terminatedState(prev, runtimeName);
    }
    // A container the next sync will (re)start is Waiting with the reason it is not running yet.
    const why = input.waiting.get(c.name);
    if (why && shouldBeRestarted(pod, c, runtime) && !input.terminal) {
      if (status.state.terminated) status.lastState = status.state;
      status.state = { waiting: { reason: why.reason, ...(why.message ? { message: why.message } : {}) } };
    }
    return status;
  });
}

/** Upstream getPhase. */
export function podPhase(pod: Pod, init: ContainerStatus[], regular: ContainerStatus[], terminal: boolean): PodPhase {
  const policy = pod.spec.restartPolicy ?? 'Always';
  let pendingInit = 0;
  let failedInit = 0;
  for (const s of init) {
    if (s.state.running) pendingInit++;
    else if (s.state.terminated) {
      if (s.state.terminated.exitCode !== 0) failedInit++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) {
        if (s.lastState.terminated.exitCode !== 0) failedInit++;
      } else pendingInit++;
    } else pendingInit++;
  }
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of regular) {
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state.waiting) {
      if (s.lastState.terminated) stopped++;
      else waiting++;
    }
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  const anyStarted = regular.some((s) => s.state.running || s.state.terminated || s.lastState.terminated);
  if ((pendingInit > 0 && !anyStarted) || waiting > 0) {
    // A pod being torn down whose containers never ran ends Failed (upstream: terminal with no success).
    return terminal ? 'Failed' : 'Pending';
  }
  if (running > 0) return terminal ? 'Failed' : 'Running';
  if (stopped > 0) {
    if (terminal) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return terminal ? 'Failed' : 'Pending';
}

function condition(type: string, ok: boolean, reason: string | undefined, message: string | undefined, previous: PodStatus | undefined, now: number): PodCondition {
  const status = ok ? 'True' : 'False';
  const old = previous?.conditions?.find((c) => c.type === type);
  const c: PodCondition = { type, status, lastProbeTime: null, lastTransitionTime: old && old.status === status && old.lastTransitionTime ? old.lastTransitionTime : rfc3339(now) };
  if (reason) c.reason = reason;
  if (message) c.message = message;
  return c;
}

export function generatePodStatus(input: StatusInput): PodStatus {
  const { pod, previous, now } = input;
  const inits = pod.spec.initContainers ?? [];
  const hasInit = inits.length > 0;
  const defaultReason = hasInit ? Reasons.PodInitializing : Reasons.ContainerCreating;
  const initStatuses = containerStatuses(input, inits, defaultReason);
  const regular = containerStatuses(input, pod.spec.containers, defaultReason);

  let phase = podPhase(pod, initStatuses, regular, input.terminal);
  // A terminal phase never changes back (upstream: the status manager refuses such updates).
  if (previous?.phase === 'Succeeded' || previous?.phase === 'Failed') phase = previous.phase;
  if (input.failure) phase = 'Failed';

  const incompleteInit = initStatuses.filter((s) => !(s.state.terminated && s.state.terminated.exitCode === 0)).map((s) => s.name);
  const regularStarted = regular.some((s) => s.state.running || s.state.terminated || s.lastState.terminated);
  const initialized = !hasInit || incompleteInit.length === 0 || regularStarted;
  const unready = regular.filter((s) => !s.ready).map((s) => s.name);
  const completed = phase === 'Succeeded';
  const conditions: PodCondition[] = [
    completed
      ? condition('Initialized', true, 'PodCompleted', undefined, previous, now)
      : condition('Initialized', initialized, initialized ? undefined : 'ContainersNotInitialized', initialized ? undefined : `containers with incomplete status: [${incompleteInit.join(' ')}]`, previous, now),
  ];
  const readyReason = completed ? 'PodCompleted' : 'ContainersNotReady';
  const allReady = unready.length === 0 && !completed && phase !== 'Failed';
  const notReadyMessage = completed ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  conditions.push(condition('Ready', allReady, allReady ? undefined : readyReason, allReady ? undefined : notReadyMessage, previous, now));
  conditions.push(condition('ContainersReady', allReady, allReady ? undefined : readyReason, allReady ? undefined : notReadyMessage, previous, now));
  conditions.push(condition('PodScheduled', true, undefined, undefined, previous, now));

  const status: PodStatus = {
    phase,
    conditions,
    hostIP: input.hostIPs[0] ?? '',
    hostIPs: input.hostIPs.map((ip) => ({ ip })),
    startTime: rfc3339(input.startTime),
    containerStatuses: regular,
    qosClass: podQos(pod),
  };
  if (hasInit) status.initContainerStatuses = initStatuses;
  const ephemeral = pod.spec.ephemeralContainers ?? [];
  if (ephemeral.length > 0) {
    // Upstream: ephemeral containers are never ready and never restarted; one not started yet waits.
    status.ephemeralContainerStatuses = containerStatuses(input, ephemeral, Reasons.ContainerCreating).map((s) => ({ ...s, ready: false }));
  }
  const sandbox = input.runtime.sandboxes[0];
  const ips = pod.spec.hostNetwork ? [...input.hostIPs] : sandbox?.state === 'SANDBOX_READY' ? sandbox.ips : [];
  // Keep the last known IPs while the pod winds down (upstream keeps podIP once assigned).
  const podIPs = ips.length > 0 ? ips : (previous?.podIPs?.map((p) => p.ip) ?? []);
  if (podIPs.length > 0) {
    status.podIP = podIPs[0];
    status.podIPs = podIPs.map((ip) => ({ ip }));
  }
  if (input.failure) {
    status.reason = input.failure.reason;
    status.message = input.failure.message;
  }
  return status;
}
