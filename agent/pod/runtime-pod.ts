/**
 * What the runtime holds for one pod, found by the io.kubernetes.pod.uid label: its sandboxes
 * (newest first, with the IP of the newest) and its containers with their full status (newest
 * attempt first per name). Upstream's kubecontainer.PodStatus, read fresh for each sync.
 */
import { readFile } from 'node:fs/promises';
import { isNotFound, type RuntimeService, type ContainerState, type PodSandboxState } from '../cri';
import { CONTAINER_HASH, CONTAINER_KIND, CONTAINER_NAME, CONTAINER_TERMINATION_MESSAGE_PATH, POD_UID } from './runtime-labels';

export interface RuntimeSandbox {
  id: string;
  attempt: number;
  state: PodSandboxState;
  createdAt: number;
  /** IPs of a ready sandbox (empty for host-network or stopped ones). */
  ips: string[];
  hostNetwork: boolean;
}

export interface RuntimeContainer {
  id: string;
  sandboxId: string;
  name: string;
  kind: 'container' | 'init' | 'ephemeral';
  attempt: number;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  message: string;
  /** Image as the runtime reports it (a tag), and the image ID or digest. */
  image: string;
  imageRef: string;
  hash: string;
  logPath: string;
  /** Contents of the termination message file, for exited containers. */
  terminationMessage?: string;
}

export interface RuntimePod {
  sandboxes: RuntimeSandbox[];
  containers: RuntimeContainer[];
}

export interface FetchOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Maps a container to the host file holding its termination message (when the agent mounted one). */
  terminationLog?: (uid: string, name: string, attempt: number) => string | undefined;
}

const MAX_MESSAGE = 4096;

/** Reads the pod's runtime state. Rejects RuntimeError when the runtime cannot be asked (the caller retries). */
export async function fetchRuntimePod(rt: RuntimeService, uid: string, o: FetchOptions): Promise<RuntimePod> {
  const call = { timeoutMs: o.timeoutMs, ...(o.signal ? { signal: o.signal } : {}) };
  const selector = { [POD_UID]: uid };
  const [sbs, cs] = await Promise.all([rt.listPodSandbox({ labelSelector: selector }, call), rt.listContainers({ labelSelector: selector }, call)]);
  sbs.sort((a, b) => b.createdAt - a.createdAt || b.metadata.attempt - a.metadata.attempt);
  const sandboxes: RuntimeSandbox[] = [];
  for (const [i, s] of sbs.entries()) {
    const rs: RuntimeSandbox = { id: s.id, attempt: s.metadata.attempt, state: s.state, createdAt: s.createdAt, ips: [], hostNetwork: false };
    if (i === 0) {
      try {
        const st = await rt.podSandboxStatus(s.id, false, call);
        rs.state = st.status.state;
        rs.ips = [st.status.ip, ...st.status.additionalIps].filter((x) => x !== '');
        rs.hostNetwork = st.status.namespaceOptions?.network === 'NODE';
      } catch (e) {
        if (!isNotFound(e)) throw e;
        continue;
      }
    }
    sandboxes.push(rs);
  }
  const containers: RuntimeContainer[] = [];
  for (const c of cs) {
    let st;
    try {
      st = (await rt.containerStatus(c.id, false, call)).status;
    } catch (e) {
      if (isNotFound(e)) continue; // removed meanwhile
      throw e;
    }
    const name = st.labels[CONTAINER_NAME] ?? st.metadata.name;
    const rc: RuntimeContainer = {
      id: st.id,
      sandboxId: c.podSandboxId,
      name,
      kind: st.annotations[CONTAINER_KIND] === 'init' ? 'init' : st.annotations[CONTAINER_KIND] === 'ephemeral' ? 'ephemeral' : 'container',
      attempt: st.metadata.attempt,
      state: st.state,
      createdAt: st.createdAt,
      startedAt: st.startedAt,
      finishedAt: st.finishedAt,
      exitCode: st.exitCode,
      reason: st.reason,
      message: st.message,
      image: st.image.image,
      imageRef: st.imageRef,
      hash: st.annotations[CONTAINER_HASH] ?? '',
      logPath: st.logPath,
    };
    if (st.state === 'CONTAINER_EXITED' && st.annotations[CONTAINER_TERMINATION_MESSAGE_PATH] !== undefined) {
      const file = o.terminationLog?.(uid, name, st.metadata.attempt);
      if (file) {
        const text = await readFile(file, 'utf8').catch(() => '');
        if (text !== '') rc.terminationMessage = text.slice(0, MAX_MESSAGE);
      }
    }
    containers.push(rc);
  }
  containers.sort((a, b) => b.attempt - a.attempt || b.createdAt - a.createdAt);
  return { sandboxes, containers };
}

/** The newest container of that name and kind, if any. */
export function latest(rp: RuntimePod, name: string, kind: RuntimeContainer['kind']): RuntimeContainer | undefined {
  return rp.containers.find((c) => c.name === name && c.kind === kind);
}

/** The newest container before the latest one (for lastState and logs?previous). */
export function previous(rp: RuntimePod, name: string, kind: RuntimeContainer['kind']): RuntimeContainer | undefined {
  return rp.containers.filter((c) => c.name === name && c.kind === kind)[1];
}
