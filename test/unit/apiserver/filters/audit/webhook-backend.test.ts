import test from 'ava';
import type { AuditEvent } from '../../../../../apiserver/filters/audit/request-audit';
import { WebhookBackend } from '../../../../../apiserver/filters/audit/webhook-backend';

const event = (n: number) => ({ auditID: `id-${n}` }) as unknown as AuditEvent;

/** A manual timer: fire() runs what is due. */
function timers() {
  const pending: Array<{ ms: number; fn: () => void; live: boolean }> = [];
  return {
    pending,
    after: (ms: number, fn: () => void) => {
      const t = { ms, fn, live: true };
      pending.push(t);
      return () => (t.live = false);
    },
    fireAll() {
      for (const t of pending.splice(0)) if (t.live) t.fn();
    },
  };
}

const ids = (body: unknown) => (body as { items: Array<{ auditID: string }> }).items.map((e) => e.auditID);

test('batches are cut at maxBatchSize or after maxWait, sent in order as an audit.k8s.io/v1 EventList', async (t) => {
  const sent: unknown[] = [];
  const clock = timers();
  const b = new WebhookBackend({ post: (body) => (sent.push(body), Promise.resolve(200)), maxBatchSize: 3, maxWaitMs: 30_000, bufferSize: 100, initialBackoffMs: 10, after: clock.after });
  for (let i = 0; i < 4; i++) b.emit(event(i));
  await b.flush();
  t.deepEqual(sent.map(ids), [['id-0', 'id-1', 'id-2'], ['id-3']]);
  t.like(sent[0], { kind: 'EventList', apiVersion: 'audit.k8s.io/v1' });
  b.emit(event(9));
  t.is(sent.length, 2);
  clock.fireAll();
  await b.flush();
  t.deepEqual(sent.map(ids).at(-1), ['id-9']);
});

test('a failing batch is retried with growing back-off, then dropped and counted; a full buffer drops new events', async (t) => {
  const waits: number[] = [];
  let calls = 0;
  let lost = 0;
  const b = new WebhookBackend({
    post: () => (calls++, Promise.resolve(503)),
    maxBatchSize: 10,
    maxWaitMs: 1,
    bufferSize: 2,
    initialBackoffMs: 100,
    after: (ms, fn) => (waits.push(ms), setImmediate(fn), () => undefined),
    onError: (n) => (lost += n),
  });
  for (let i = 0; i < 3; i++) b.emit(event(i));
  await b.flush();
  t.is(calls, 5);
  t.deepEqual(waits.filter((w) => w >= 100), [100, 150, 225, 337.5]);
  t.is(lost, 3); // one dropped at the full buffer, two after the retries
});

test('a client error is not retried', async (t) => {
  let calls = 0;
  let lost = 0;
  const b = new WebhookBackend({ post: () => (calls++, Promise.resolve(400)), maxBatchSize: 1, maxWaitMs: 1, bufferSize: 10, initialBackoffMs: 1, onError: (n) => (lost += n) });
  b.emit(event(1));
  await b.flush();
  t.is(calls, 1);
  t.is(lost, 1);
});
