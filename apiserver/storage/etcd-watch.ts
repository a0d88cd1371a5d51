import type { Etcd3, IDuplexStream, IEvent, IWatchCreateRequest, IWatchRequest, IWatchResponse } from 'etcd3';

/** Why a watch stream stopped delivering. */
export type WatchEnd =
  /** etcd cancelled the watcher because its start revision was compacted away. */
  | { kind: 'compacted'; compactRevision: number }
  /** etcd cancelled the watcher for another reason (e.g. permission); retrying will not help. */
  | { kind: 'refused'; reason: string }
  /** The transport failed or the server ended the stream; the watch can be resumed on a new stream. */
  | { kind: 'broken'; error: Error }
  /** close() was called. */
  | { kind: 'closed' };

/** grpc-js hands etcd3 a Node Duplex; its flow control (pause/resume) is what bounds memory here. */
interface WatchDuplex extends IDuplexStream<IWatchRequest, IWatchResponse> {
  pause(): void;
  resume(): void;
}

/** Events a stream may hold unread before it stops reading from the connection. */
const HIGH_WATER = 1024;
/**
 * Bytes of events (values and previous values) a stream may hold unread before it stops reading:
 * with objects near etcd's 1.5 MiB request limit, 1024 events alone could be 3 GiB.
 */
const HIGH_WATER_BYTES = 16 * 1024 * 1024;

/**
 * One etcd watcher on its own gRPC Watch stream (grpc-js multiplexes all of them on the member's
 * one HTTP/2 connection). A stream per watcher, rather than etcd3's shared WatchManager, gives each
 * watcher its own flow control: a consumer that stops reading pauses only its stream, HTTP/2 flow
 * control then stops etcd's sends, and etcd parks that watcher as slow and replays from its
 * history later, just as for a slow clientv3 watcher. (etcd3's WatchManager also resumes from the
 * header revision of the last response, which can skip replayed events after a reconnect.)
 */
export class EtcdWatchStream {
  /** True once etcd confirmed the watcher (the stream reached a live member). */
  established = false;
  private queue: IEvent[] = [];
  private queueBytes = 0;
  private end: WatchEnd | null = null;
  private paused = false;
  private wake: (() => void) | null = null;

  private constructor(private readonly stream: WatchDuplex) {}

  /** Opens a stream and registers one watcher on it. Transport failures surface from next(). */
  static async open(client: Etcd3, request: IWatchCreateRequest): Promise<EtcdWatchStream> {
    // etcd3 marks WatchClient internal, but it is the documented raw Watch RPC of the client.
    const stream = (await client.watchClient.watch()) as WatchDuplex;
    const w = new EtcdWatchStream(stream);
    stream.on('data', (res: IWatchResponse) => w.onResponse(res));
    stream.on('error', (err: Error) => w.finish({ kind: 'broken', error: err }));
    stream.on('end', () => w.finish({ kind: 'broken', error: new Error('etcd ended the watch stream') }));
    stream.write({ create_request: request });
    return w;
  }

  /** The next events in revision order, waiting for some; or, once none are left, why the stream ended. */
  async next(): Promise<IEvent[] | WatchEnd> {
    while (this.queue.length === 0 && !this.end) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
    if (this.queue.length === 0) return this.end as WatchEnd;
    const batch = this.queue;
    this.queue = [];
    this.queueBytes = 0;
    if (this.paused) {
      this.paused = false;
      this.stream.resume();
    }
    return batch;
  }

  /** Cancels the RPC and wakes a pending next() with 'closed'. Idempotent. */
  close(): void {
    if (this.end?.kind === 'closed') return;
    this.queue = [];
    this.queueBytes = 0;
    this.finish({ kind: 'closed' }, true);
    // Half-close first: etcd3 listens for errors on writable streams and would count the
    // cancellation below as a failed host, dropping every channel to it.
    try {
      this.stream.end();
      this.stream.cancel();
    } catch {
      // Already torn down by a transport error: nothing left to cancel.
    }
  }

  private onResponse(res: IWatchResponse): void {
    if (this.end) return;
    if (res.created) this.established = true;
    if (res.canceled) {
      const compactRevision = Number(res.compact_revision);
      if (compactRevision > 0) this.finish({ kind: 'compacted', compactRevision });
      else this.finish({ kind: 'refused', reason: res.cancel_reason || 'watch cancelled by etcd' });
      return;
    }
    if (res.events.length === 0) return; // the "created" reply or a progress notification
    for (const ev of res.events) {
      this.queue.push(ev);
      this.queueBytes += (ev.kv?.value?.length ?? 0) + (ev.prev_kv?.value?.length ?? 0);
    }
    if (!this.paused && (this.queue.length >= HIGH_WATER || this.queueBytes >= HIGH_WATER_BYTES)) {
      this.paused = true;
      this.stream.pause();
    }
    this.wake?.();
  }

  private finish(end: WatchEnd, force = false): void {
    if (this.end && !force) return;
    this.end = end;
    this.wake?.();
  }
}
