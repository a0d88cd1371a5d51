/**
 * The node controller, after virtual-kubelet's node/ NodeController (register the node, then
 * keep its Lease and status current): registration (./registration) when registerNode, then the
 * Lease loop (./lease-controller) and the status loop (./status-updater) on the heartbeat client.
 * Both loops run under one failure policy (./heartbeat-policy): the heartbeat metrics observer,
 * the redial of the API connections, and the watchdog's health signal, which watches each loop
 * from the moment it starts. Registration retries count as the status loop's progress, since the
 * status loop registers again when the Node vanishes.
 */
import type { ApiClient } from '../client/api-client';
import type { Log } from '../platform/logger';
import type { Clock } from '../platform/clock';
import type { HeartbeatHealth } from './heartbeat-health';
import type { HeartbeatObserver } from './heartbeat-observer';
import { HeartbeatPolicy } from './heartbeat-policy';
import { LeaseController } from './lease-controller';
import type { NodeIdentity } from './node-object';
import type { DesiredNodeStatus } from './node-status';
import { ProgressTracker } from './progress';
import type { NodeEvents } from './node-events';
import { NodeRegistrar } from './registration';
import { NodeStatusUpdater } from './status-updater';

/** The largest heartbeat back-off step (spec 8). */
const MAX_BACKOFF_MS = 7000;

export interface NodeControllerDeps {
  /** For registration (paced by kubeAPIQPS like every other request). */
  client: ApiClient;
  /** For the Lease and the status (never paced, as the kubelet's heartbeatClient). */
  heartbeatClient: ApiClient;
  clock: Clock;
  /** The logger of one component: 'registration', 'node-lease' or 'node-status'. */
  logFor: (component: 'registration' | 'node-lease' | 'node-status') => Log;
  identity: NodeIdentity;
  status: { compute(): Promise<DesiredNodeStatus> };
  /** Create the Node (and create it again when it vanishes); false: heartbeat an existing one only. */
  registerNode: boolean;
  leaseDurationSeconds: number;
  /** nodeStatusUpdateFrequency and nodeStatusReportFrequency. */
  updateFrequencyMs: number;
  reportFrequencyMs: number;
  /** The watchdog's health signal; it watches both loops from the moment run() starts them. */
  health: HeartbeatHealth;
  /** The heartbeat metrics; optional. */
  observer?: HeartbeatObserver;
  /** Drops and redials the API connections after repeated heartbeat failures. */
  onRepeatedFailure?: () => Promise<void>;
  /** The Node's events; default none. */
  events?: NodeEvents;
}

export class NodeController {
  private readonly leaseProgress: ProgressTracker;
  private readonly statusProgress: ProgressTracker;
  private readonly policy: HeartbeatPolicy;
  private readonly registrar: NodeRegistrar;
  private readonly lease: LeaseController;
  private readonly updater: NodeStatusUpdater;

  constructor(private readonly d: NodeControllerDeps) {
    const nodeName = d.identity.name;
    this.leaseProgress = new ProgressTracker(d.clock);
    this.statusProgress = new ProgressTracker(d.clock);
    this.policy = new HeartbeatPolicy({
      health: d.health,
      ...(d.observer ? { observer: d.observer } : {}),
      ...(d.onRepeatedFailure ? { onRepeatedFailure: d.onRepeatedFailure } : {}),
    });
    this.registrar = new NodeRegistrar({
      client: d.client,
      clock: d.clock,
      log: d.logFor('registration'),
      identity: d.identity,
      status: d.status,
      // Re-registration runs inside the status loop, so its retries count as that loop's progress.
      progress: this.statusProgress,
      ...(d.events ? { events: d.events } : {}),
    });
    this.lease = new LeaseController({
      client: d.heartbeatClient,
      clock: d.clock,
      log: d.logFor('node-lease'),
      nodeName,
      leaseDurationSeconds: d.leaseDurationSeconds,
      nodeUid: () => this.registrar.nodeUid,
      policy: this.policy,
      progress: this.leaseProgress,
      maxBackoffMs: MAX_BACKOFF_MS,
    });
    this.updater = new NodeStatusUpdater({
      client: d.heartbeatClient,
      clock: d.clock,
      log: d.logFor('node-status'),
      nodeName,
      status: d.status,
      updateFrequencyMs: d.updateFrequencyMs,
      reportFrequencyMs: d.reportFrequencyMs,
      reregister: d.registerNode ? (s) => this.registrar.register(s) : undefined,
      policy: this.policy,
      progress: this.statusProgress,
      ...(d.events ? { events: d.events } : {}),
    });
  }

  /** The registered Node's uid (owner of the Lease and of mirror pods), once registered by this agent. */
  get nodeUid(): string | undefined {
    return this.registrar.nodeUid;
  }

  /** How often the Lease is renewed (leaseDuration/4, before jitter). */
  get renewIntervalMs(): number {
    return this.lease.renewIntervalMs;
  }

  /** Resolves after the first successful Lease renewal (never rejects; may never resolve). */
  whenFirstRenewed(): Promise<void> {
    return this.lease.whenFirstRenewed();
  }

  /**
   * Registers the Node when registerNode is set, retrying until it succeeds (./registration).
   * Resolves false when the signal aborted during registration, else true (always without registerNode).
   */
  async register(signal: AbortSignal): Promise<boolean> {
    if (!this.d.registerNode) return true;
    return (await this.registrar.register(signal)) !== undefined;
  }

  /** Runs the Lease and status loops until the signal aborts, each watched by the health signal from now on. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    // A renewal makes at most three calls (update, get, update); a status sync two (get, patch).
    this.policy.watch(this.lease.failures, {
      periodMs: Math.max(this.lease.renewIntervalMs * 1.04, MAX_BACKOFF_MS),
      requestsPerAttempt: 3,
      minStuckMs: this.d.leaseDurationSeconds * 1000,
    });
    this.policy.watch(this.updater.failures, { periodMs: this.d.updateFrequencyMs, requestsPerAttempt: 2 });
    await Promise.allSettled([this.lease.run(signal), this.updater.run(signal)]);
  }
}
