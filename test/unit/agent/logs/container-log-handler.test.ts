/** GET /containerLogs/…: a followed log ends with its connection, and a peer that stops reading is cut at the write deadline (issue 16, defect 2). */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import test from 'ava';
import { containerLogHandler, type LogLocator } from '../../../../agent/logs/container-log-handler';
import { FakeClock, flush } from '../../../helpers/fake-clock';

/** 200 lines of 1 KB: more than a response buffers before it waits for its peer. */
const LOG = Array.from({ length: 200 }, (_, i) => `2025-01-01T00:00:01.${String(i).padStart(9, '0')}Z stdout F ${'x'.repeat(1000)}`).join('\n') + '\n';

/** A response whose peer takes the first chunk and then stops reading. */
class StalledResponse extends Writable {
  statusCode = 0;
  took = 0;
  headersFlushed = false;
  writeHead(status: number): this {
    this.statusCode = status;
    return this;
  }
  flushHeaders(): void {
    this.headersFlushed = true;
  }
  override _write(_chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    if (this.took++ === 0) cb();
  }
}

async function withLog(fn: (file: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-clh-'));
  try {
    const file = path.join(dir, '0.log');
    await writeFile(file, LOG);
    await fn(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function serve(file: string, res: StalledResponse, clock: FakeClock) {
  const locator: LogLocator = {
    containerLog: () => Promise.resolve({ path: file, containerId: 'c1', running: true }),
    containerRunning: () => Promise.resolve(true),
  };
  const handler = containerLogHandler({ locator, clock, pollMs: 100, writeDeadlineMs: 5000, after: (ms, fn) => clock.after(ms, fn) });
  const req = { method: 'GET', url: '/containerLogs/ns/pod/c?follow=true', headers: {} } as unknown as IncomingMessage;
  return handler(req, res as unknown as ServerResponse);
}

/** Lets the handler run (real file reads) until the response waits for its peer. */
async function untilBlocked(res: StalledResponse): Promise<void> {
  for (let i = 0; i < 200 && !res.writableNeedDrain; i++) {
    await flush();
    await new Promise((r) => setTimeout(r, 2));
  }
}

test('a followed log whose peer stopped reading ends when the connection closes', (t) =>
  withLog(async (file) => {
    const clock = new FakeClock();
    const res = new StalledResponse();
    const done = serve(file, res, clock);
    await untilBlocked(res);
    t.true(res.writableNeedDrain, 'the handler waits for the peer');
    t.is(res.statusCode, 200);
    res.destroy(); // the client goes away: no 'drain' will ever come
    // The handler's promise settles without an error (it would hang if the handler kept waiting for 'drain').
    await t.notThrowsAsync(done);
    t.true(res.destroyed);
  }));

test('a followed log whose peer takes nothing for the write deadline is cut', (t) =>
  withLog(async (file) => {
    const clock = new FakeClock();
    const res = new StalledResponse();
    const done = serve(file, res, clock);
    await untilBlocked(res);
    t.true(res.writableNeedDrain);
    await clock.advance(4999);
    t.false(res.destroyed);
    await clock.advance(1);
    await done;
    t.true(res.destroyed);
  }));

test('a followed log that is still empty answers its status at once (the headers are not held back until a first line)', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-clh-'));
  try {
    const file = path.join(dir, '0.log');
    await writeFile(file, '');
    const clock = new FakeClock();
    const res = new StalledResponse();
    const done = serve(file, res, clock);
    for (let i = 0; i < 200 && !res.headersFlushed; i++) await new Promise((r) => setTimeout(r, 2));
    t.is(res.statusCode, 200);
    t.true(res.headersFlushed);
    t.is(res.took, 0, 'nothing written yet');
    res.destroy();
    await done;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
