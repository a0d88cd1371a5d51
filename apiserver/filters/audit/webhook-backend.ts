/**
 * The audit webhook backend (--audit-webhook-config-file, a kubeconfig naming the remote service):
 * events are buffered (at most --audit-webhook-batch-buffer-size; beyond it they are dropped and
 * counted, never blocking a request) and sent as an audit.k8s.io/v1 EventList in batches of at most
 * --audit-webhook-batch-max-size, at the latest --audit-webhook-batch-max-wait after the first
 * event of a batch. A batch that fails is retried with exponential back-off from
 * --audit-webhook-initial-backoff (factor 1.5, 5 attempts, as upstream's webhook back-off), then
 * dropped and counted. Batches are sent one at a time, in order.
 */
import type { AuditEvent } from './request-audit';

/** Sends one batch; resolves with the HTTP status, rejects on network failure. */
export type PostBatch = (body: unknown) => Promise<number>;

export interface WebhookBackendOptions {
  post: PostBatch;
  maxBatchSize: number;
  maxWaitMs: number;
  bufferSize: number;
  initialBackoffMs: number;
  /** One-shot timer (injected for tests); returns a cancel function. */
  after?: (ms: number, fn: () => void) => () => void;
  onError?: (count: number, err?: unknown) => void;
}

const ATTEMPTS = 5;

export class WebhookBackend {
  private buffer: AuditEvent[] = [];
  private cancelWait?: () => void;
  private sending: Promise<void> = Promise.resolve();
  private readonly after: NonNullable<WebhookBackendOptions['after']>;

  constructor(private readonly o: WebhookBackendOptions) {
    this.after =
      o.after ??
      ((ms, fn) => {
        const t = setTimeout(fn, ms);
        t.unref();
        return () => clearTimeout(t);
      });
  }

  emit(ev: AuditEvent): void {
    if (this.buffer.length >= this.o.bufferSize) {
      this.o.onError?.(1);
      return;
    }
    this.buffer.push(ev);
    if (this.buffer.length >= this.o.maxBatchSize) this.cut();
    else this.cancelWait ??= this.after(this.o.maxWaitMs, () => this.cut());
  }

  /** Sends everything buffered and waits for the batches in flight (shutdown). */
  async flush(): Promise<void> {
    while (this.buffer.length) this.cut();
    await this.sending;
  }

  private cut(): void {
    this.cancelWait?.();
    this.cancelWait = undefined;
    const batch = this.buffer.splice(0, this.o.maxBatchSize);
    if (!batch.length) return;
    // Serialised now: the events' objects may be changed by later code once the request ends.
    const body = JSON.parse(JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: batch })) as unknown;
    this.sending = this.sending.then(() => this.send(body, batch.length));
    if (this.buffer.length) this.cancelWait = this.after(this.o.maxWaitMs, () => this.cut());
  }

  private async send(body: unknown, count: number): Promise<void> {
    let wait = this.o.initialBackoffMs;
    let lastErr: unknown;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        const status = await this.o.post(body);
        if (status >= 200 && status < 300) return;
        lastErr = new Error(`audit webhook answered ${status}`);
        if (status < 500 && status !== 429) break; // a client error will not change on retry
      } catch (err) {
        lastErr = err;
      }
      if (attempt < ATTEMPTS - 1) {
        await new Promise<void>((r) => this.after(wait, r));
        wait *= 1.5;
      }
    }
    this.o.onError?.(count, lastErr);
  }
}
