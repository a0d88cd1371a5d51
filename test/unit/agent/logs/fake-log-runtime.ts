/**
 * The three CRI calls the container log manager makes, over containers the test describes. Like
 * containerd, ReopenContainerLog opens the log path afresh (creating it) for running containers.
 */
import { appendFile } from 'node:fs/promises';
import { RuntimeError } from '../../../../agent/cri/errors';
import type { RuntimeService } from '../../../../agent/cri/runtime-service';
import type { Container, ContainerState, ContainerStatusResult } from '../../../../agent/cri/types';

export interface FakeContainer {
  id: string;
  logPath: string;
  state?: ContainerState;
  /** ContainerStatus rejects with this message. */
  statusError?: string;
  /** ReopenContainerLog rejects with this message. */
  reopenError?: string;
}

export class FakeLogRuntime implements Pick<RuntimeService, 'listContainers' | 'containerStatus' | 'reopenContainerLog'> {
  readonly reopened: string[] = [];
  lists = 0;

  constructor(readonly containers: FakeContainer[]) {}

  private find(id: string, rpc: string): FakeContainer {
    const c = this.containers.find((x) => x.id === id);
    if (!c) throw new RuntimeError('NotFound', `container "${id}" not found`, rpc);
    return c;
  }

  listContainers(): Promise<Container[]> {
    this.lists++;
    return Promise.resolve(this.containers.map((c) => ({ id: c.id, state: c.state ?? 'CONTAINER_RUNNING' }) as Container));
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async on purpose: a fake of an async API, whose throws (this.find's too) must reach the caller as rejections
  async containerStatus(id: string): Promise<ContainerStatusResult> {
    const c = this.find(id, 'ContainerStatus');
    if (c.statusError !== undefined) throw new RuntimeError('Unknown', c.statusError, 'ContainerStatus');
    return { status: { id, state: c.state ?? 'CONTAINER_RUNNING', logPath: c.logPath }, info: {} } as unknown as ContainerStatusResult;
  }

  async reopenContainerLog(id: string): Promise<void> {
    const c = this.find(id, 'ReopenContainerLog');
    this.reopened.push(id);
    if (c.reopenError !== undefined) throw new RuntimeError('Unknown', c.reopenError, 'ReopenContainerLog');
    if ((c.state ?? 'CONTAINER_RUNNING') !== 'CONTAINER_RUNNING') throw new RuntimeError('FailedPrecondition', 'container is not running', 'ReopenContainerLog');
    await appendFile(c.logPath, '');
  }
}
