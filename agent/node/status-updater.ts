/**
 * The node status loop (kubelet syncNodeStatus / tryUpdateNodeStatus): every
 * nodeStatusUpdateFrequency (10 s) compute the status, read the Node (resourceVersion=0, from
 * the server's cache, as the kubelet's first try does), and PATCH nodes/{name}/status with a
 * strategic merge patch when something changed or nodeStatusReportFrequency (5 min) has passed
 * since the last report. Reading the server's copy matters: when the control plane has marked
 * the node Unknown, the difference is seen and Ready is posted again at once.
 */
import type { KObject } from '../../apiserver/api/types';
import type { ApiClient } from '../client/api-client';
import { ClientError, isAbort, isNotFound } from '../client/client-error';
import { nodesResource } from '../client/resources';
import type { Log } from '../platform/logger';
import type { Clock } from '../platform/clock';
import { changedFields, rfc3339, statusPatch, type DesiredNodeStatus } from './node-status';
import type { HeartbeatObserver } from './heartbeat-observer';
import type { ProgressTracker } from './progress';

export interface StatusUpdaterDeps {
  client: ApiClient;
  clock: Clock;
  log: Log;
  nodeName: string;
  status: { compute(): Promise<DesiredNodeStatus> };
  updateFrequencyMs: number;
  reportFrequencyMs: number;
  /** Called when the Node has vanished from the server; should register it again. */
  reregister?: (signal: AbortSignal) => Promise<unknown>;
  /** Called after this many consecutive failures (and every as many after), to drop half-dead connections. */
  onRepeatedFailure?: () => Promise<void>;
  redialAfterFailures?: number;
  progress?: ProgressTracker;
  /** Told the outcome of every heartbeat attempt (metrics); optional. */
  observer?: HeartbeatObserver;
}

export type SyncResult = 'patched' | 'unchanged';

export class NodeStatusUpdater {
  private lastReport: number | undefined;
  private failures = 0;
  constructor(private readonly d: StatusUpdaterDeps) {}

  /** Runs the loop until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.syncLogged(signal);
      if (!(await this.d.clock.sleep(this.d.updateFrequencyMs, signal))) break;
    }
  }

  private async syncLogged(signal: AbortSignal): Promise<void> {
    try {
      await this.sync(signal);
      this.failures = 0;
      this.d.observer?.heartbeat('status', true);
    } catch (e) {
      if (signal.aborted || isAbort(e)) return;
      this.d.observer?.heartbeat('status', false);
      this.failures++;
      const n = this.d.redialAfterFailures ?? 3;
      this.d.log.warn(
        { node: this.d.nodeName, consecutiveFailures: this.failures, code: e instanceof ClientError ? e.status : undefined, error: (e as Error).message },
        'unable to update node status; will retry',
      );
      if (this.d.onRepeatedFailure && this.failures % n === 0) {
        this.d.log.warn({ node: this.d.nodeName, consecutiveFailures: this.failures }, 'repeated node status failures; redialing the API server');
        await this.d.onRepeatedFailure();
      }
    } finally {
      this.d.progress?.mark();
    }
  }

  /** One sync; rejects with the ClientError of the failing call. */
  async sync(signal?: AbortSignal): Promise<SyncResult> {
    const { client, nodeName } = this.d;
    const desired = await this.d.status.compute();
    let node: KObject;
    try {
      node = await client.get(nodesResource, nodeName, { resourceVersion: '0', signal });
    } catch (e) {
      if (isNotFound(e) && this.d.reregister && signal) {
        this.d.log.warn({ node: nodeName }, 'node object no longer exists on the API server; registering it again');
        await this.d.reregister(signal);
        this.lastReport = this.d.clock.now();
        return 'patched';
      }
      throw e;
    }
    const now = this.d.clock.now();
    const changed = changedFields(node['status'], desired);
    const due = this.lastReport === undefined || now - this.lastReport >= this.d.reportFrequencyMs;
    if (changed.size === 0 && !due) return 'unchanged';
    await client.patch(nodesResource, nodeName, 'strategic', statusPatch(node['status'], desired, rfc3339(now), changed), { subresource: 'status', signal });
    this.lastReport = now;
    if (changed.size > 0) this.d.log.info({ node: nodeName, changed: [...changed] }, 'node status changed; posted it');
    else this.d.log.debug({ node: nodeName }, 'posted node status (report interval)');
    return 'patched';
  }
}
