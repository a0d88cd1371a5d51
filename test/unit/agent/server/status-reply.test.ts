import test from 'ava';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConflictError, InternalError, NotFoundError } from '../../../../agent/errors';
import { answer } from '../../../../agent/server/node-server';
import { replyError } from '../../../../agent/server/status-reply';

/** A ServerResponse that records what is written. */
function recorder(headersSent = false) {
  const r = { status: 0, headers: {} as Record<string, unknown>, body: '', ended: false };
  const res = {
    headersSent,
    writeHead(code: number, headers: Record<string, unknown>) {
      r.status = code;
      r.headers = headers;
      return this;
    },
    end(b?: string) {
      r.body += b ?? '';
      r.ended = true;
    },
  } as unknown as ServerResponse;
  return { res, r };
}

test('an AgentError is a Status body with its code, reason and message', (t) => {
  const { res, r } = recorder();
  replyError(res, new ConflictError('busy'));
  t.is(r.status, 409);
  t.is(r.headers['content-type'], 'application/json');
  t.deepEqual(JSON.parse(r.body), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'busy', reason: 'Conflict', code: 409 });
});

test('on a plain-text route an AgentError is its message with a final newline', (t) => {
  const { res, r } = recorder();
  replyError(res, new NotFoundError('no such health check: x'), 'text');
  t.is(r.status, 404);
  t.is(r.body, 'no such health check: x\n');
  t.regex(String(r.headers['content-type']), /^text\/plain/);
});

test('anything else is a 500 Status "Internal error occurred", on every route', (t) => {
  for (const body of ['status', 'text'] as const) {
    const { res, r } = recorder();
    replyError(res, new Error('kaput'), body);
    t.is(r.status, 500);
    t.like(JSON.parse(r.body), { reason: 'InternalError', code: 500, message: 'Internal error occurred: kaput' });
  }
});

test('after the headers went out the answer is only ended', (t) => {
  const { res, r } = recorder(true);
  replyError(res, new InternalError('late'));
  t.true(r.ended);
  t.is(r.status, 0);
  t.is(r.body, '');
});

test('answer: a resolved body is a 200 JSON answer; a throw is answered by the edge', async (t) => {
  const ok = recorder();
  await answer(() => Promise.resolve({ items: ['a'] }), {} as IncomingMessage, ok.res);
  t.is(ok.r.status, 200);
  t.deepEqual(JSON.parse(ok.r.body), { items: ['a'] });
  const failed = recorder();
  await answer(() => Promise.reject(new NotFoundError('gone')), {} as IncomingMessage, failed.res);
  t.is(failed.r.status, 404);
  t.like(JSON.parse(failed.r.body), { reason: 'NotFound', message: 'gone' });
});
