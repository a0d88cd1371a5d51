/**
 * Registers the Node with the API server, as the kubelet's registerWithAPIServer: create it;
 * when it already exists, reconcile (labels, then status) instead of failing; while the API
 * server is unreachable, retry with exponential back-off (100 ms doubling to 7 s), logging each
 * failure on one line.
 */
import type { KObject } from '../../apiserver/api/types';
import type { ApiClient } from '../client/api-client';
import { isAbort, isAlreadyExists, ClientError } from '../client/client-error';
import { nodesResource } from '../client/resources';
import type { Log } from '../platform/logger';
import { Backoff } from './backoff';
import type { NodeEvents } from './node-events';
import type { Clock } from '../platform/clock';
import { newNodeObject, type NodeIdentity } from './node-object';
import { rfc3339, statusPatch, type DesiredNodeStatus } from './node-status';
import type { ProgressTracker } from './progress';

export interface RegistrarDeps {
  client: ApiClient;
  clock: Clock;
  log: Log;
  identity: NodeIdentity;
  status: { compute(): Promise<DesiredNodeStatus> };
  progress?: ProgressTracker;
  /** Back-off bounds (defaults 100 ms and 7 s, the kubelet's). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** The Node's events (condition transitions, reboot); default none. */
  events?: NodeEvents;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export class NodeRegistrar {
  private registered: KObject | undefined;
  constructor(private readonly d: RegistrarDeps) {}

  /** The registered Node's uid (for the Lease's owner reference), once registered. */
  get nodeUid(): string | undefined {
    return this.registered?.metadata.uid;
  }

  /**
   * Registers, retrying until it succeeds or `signal` aborts. Resolves the server's Node, or
   * undefined when aborted. Never rejects.
   */
  async register(signal: AbortSignal): Promise<KObject | undefined> {
    const backoff = new Backoff({ initialMs: this.d.initialBackoffMs ?? 100, maxMs: this.d.maxBackoffMs ?? 7000 });
    const node = this.d.identity.name;
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        const result = await this.attempt(signal);
        this.registered = result;
        this.d.progress?.mark();
        return result;
      } catch (e) {
        if (signal.aborted || isAbort(e)) return undefined;
        this.d.progress?.mark();
        const retryInMs = backoff.next();
        const fields = { node, attempt, retryInMs, code: e instanceof ClientError ? e.status : undefined, error: describe(e) };
        if (e instanceof ClientError && e.status === 0) this.d.log.warn(fields, 'unable to register node: API server unreachable; retrying');
        else this.d.log.error(fields, 'unable to register node with the API server; retrying');
        await this.d.clock.sleep(retryInMs, signal);
      }
    }
    return undefined;
  }

  /** One registration attempt; rejects with the ClientError of the failing call. */
  async attempt(signal?: AbortSignal): Promise<KObject> {
    const { client, identity } = this.d;
    const desired = await this.d.status.compute();
    const now = rfc3339(this.d.clock.now());
    try {
      const created = await client.create(nodesResource, newNodeObject(identity, desired, now), { signal });
      this.d.log.info({ node: identity.name, uid: created.metadata.uid }, 'registered node');
      this.d.events?.statusPosted(undefined, desired);
      return created;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    const existing = await client.get(nodesResource, identity.name, { signal });
    return this.reconcile(existing, desired, now, signal);
  }

  /** Brings an existing Node in line: our labels (others' labels untouched), then the status. */
  private async reconcile(existing: KObject, desired: DesiredNodeStatus, now: string, signal?: AbortSignal): Promise<KObject> {
    const { client, identity } = this.d;
    const labels = existing.metadata.labels ?? {};
    const wrong: Record<string, string> = {};
    for (const [k, v] of Object.entries(identity.labels)) if (labels[k] !== v) wrong[k] = v;
    if (Object.keys(wrong).length > 0) {
      await client.patch(nodesResource, identity.name, 'merge', { metadata: { labels: wrong } }, { signal });
    }
    const patch = statusPatch(existing['status'], desired, now);
    const updated = await client.patch(nodesResource, identity.name, 'strategic', patch, { subresource: 'status', signal });
    this.d.events?.statusPosted(existing['status'], desired);
    this.d.log.info(
      { node: identity.name, uid: updated.metadata.uid, labelsChanged: Object.keys(wrong), statusFields: Object.keys(patch.status) },
      'node already registered; reconciled it',
    );
    return updated;
  }
}
