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
import { isAbort, isNotFound } from '../client/client-error';
import { nodesResource } from '../client/resources';
import type { Log } from '../platform/logger';
import type { Clock } from '../platform/clock';
import { changedFields, rfc3339, statusPatch, type DesiredNodeStatus } from './node-status';
import { HeartbeatPolicy, type LoopFailures } from './heartbeat-policy';
import type { NodeEvents } from './node-events';
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
  /** The node's heartbeat failure policy (observer, redial, health), shared with the Lease loop; default: one of its own with none of them. */
  policy?: HeartbeatPolicy;
  /** Redial after this many consecutive failures (default 3). */
  redialAfterFailures?: number;
  progress?: ProgressTracker;
  /** The Node's events (condition transitions, reboot, schedulable); default none. */
  events?: NodeEvents;
}

export type SyncResult = 'patched' | 'unchanged';

export class NodeStatusUpdater {
  private lastReport: number | undefined;
  /** This loop under the node's failure policy: counts, logs, redial, metrics, progress (no back-off: it retries at the next tick). */
  readonly failures: LoopFailures;

  constructor(private readonly d: StatusUpdaterDeps) {
    this.failures = (d.policy ?? new HeartbeatPolicy()).loop({
      kind: 'status',
      log: d.log,
      nodeName: d.nodeName,
      ...(d.progress ? { progress: d.progress } : {}),
      redialAfterFailures: d.redialAfterFailures ?? 3,
      messages: { failed: 'unable to update node status; will retry', redial: 'repeated node status failures; redialing the API server' },
    });
  }

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
      this.failures.succeeded();
    } catch (e) {
      if (signal.aborted || isAbort(e)) return;
      await this.failures.failed(e);
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
    this.d.events?.specSeen(node);
    const now = this.d.clock.now();
    const changed = changedFields(node['status'], desired);
    const due = this.lastReport === undefined || now - this.lastReport >= this.d.reportFrequencyMs;
    if (changed.size === 0 && !due) return 'unchanged';
    await client.patch(nodesResource, nodeName, 'strategic', statusPatch(node['status'], desired, rfc3339(now), changed), { subresource: 'status', signal });
    this.lastReport = now;
    this.d.events?.statusPosted(node['status'], desired);
    if (changed.size > 0) this.d.log.info({ node: nodeName, changed: [...changed] }, 'node status changed; posted it');
    else this.d.log.debug({ node: nodeName }, 'posted node status (report interval)');
    return 'patched';
  }
}
