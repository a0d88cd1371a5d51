/**
 * CRI runtime.v1 streaming requests (Exec, Attach, PortForward) as the agent sees them, and the
 * in-process stream target of a runtime that serves streams itself (the simulator).
 */
import type { ExecStreams } from '../../common/stream/exec-streams';
import type { PortDialer } from '../../common/stream/portforward';
import type { ExitResult } from '../../common/stream/remotecommand';

/** CRI ExecRequest: a command in a running container, with the streams the client asked for. */
export interface StreamExecRequest {
  containerId: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
}

/** CRI AttachRequest: the container's main process. */
export type StreamAttachRequest = Omit<StreamExecRequest, 'cmd'>;

/** CRI PortForwardRequest (ports are advisory: the client names them on the stream). */
export interface StreamPortForwardRequest {
  podSandboxId: string;
  ports: number[];
}

/**
 * A stream an in-process runtime (the simulator) serves itself instead of on a stream server:
 * exec and attach run against the client's streams and resolve how they ended; port-forward dials
 * a pod port.
 */
export type LocalStreamTarget = { kind: 'exec'; cmd: string[]; run(streams: ExecStreams): Promise<ExitResult> } | { kind: 'portforward'; dial: PortDialer };
