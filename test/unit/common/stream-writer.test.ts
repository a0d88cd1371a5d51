import test from 'ava';
import { Writable } from 'node:stream';
import { StreamWriter } from '../../../common/stream-writer';
import { FakeClock, flush } from '../../helpers/fake-clock';

/** A response whose peer takes nothing until release() is called: writes beyond 8 bytes report a full buffer. */
class PeerResponse extends Writable {
  readonly taken: string[] = [];
  private pending: Array<() => void> = [];
  private reading = false;

  constructor() {
    super({ highWaterMark: 8, decodeStrings: false });
  }

  override _write(chunk: string, _enc: BufferEncoding, cb: () => void): void {
    const take = () => {
      this.taken.push(chunk);
      cb();
    };
    if (this.reading) take();
    else this.pending.push(take);
  }

  /** The peer starts reading: everything pending is taken. */
  release(): void {
    this.reading = true;
    for (const take of this.pending.splice(0)) take();
  }
}

function setup() {
  const clock = new FakeClock();
  const res = new PeerResponse();
  const ac = new AbortController();
  const out = new StreamWriter(res, { signal: ac.signal, writeDeadlineMs: 1000, after: (ms, fn) => clock.after(ms, fn) });
  return { clock, res, ac, out };
}

test('a write the peer keeps up with resolves true at once', async (t) => {
  const { res, out } = setup();
  res.release();
  t.true(await out.write('a'));
  t.deepEqual(res.taken, ['a']);
});

test('a blocked write resolves true when the peer drains', async (t) => {
  const { res, out } = setup();
  const w = out.write('0123456789');
  await flush();
  res.release();
  t.true(await w);
  t.is(out.ended, undefined);
});

test('a blocked write ends when the connection closes (no drain ever comes then)', async (t) => {
  const { res, out } = setup();
  const w = out.write('0123456789');
  res.destroy();
  t.false(await w);
  t.is(out.ended, 'closed');
  t.true(out.signal.aborted);
  t.false(await out.write('more'), 'nothing more is written once the stream is over');
});

test('a blocked write ends when the caller stops the stream; the response is then ended, not cut', async (t) => {
  const { res, ac, out } = setup();
  const w = out.write('0123456789');
  ac.abort();
  t.false(await w);
  t.is(out.ended, 'aborted');
  t.false(res.destroyed);
  out.end('{"type":"ERROR"}\n');
  t.true(res.writableEnded);
});

test('a peer that takes nothing for the write deadline is cut', async (t) => {
  const { clock, res, out } = setup();
  const w = out.write('0123456789');
  await clock.advance(999);
  t.false(res.destroyed, 'not before the deadline');
  await clock.advance(1);
  t.false(await w);
  t.is(out.ended, 'deadline');
  t.true(res.destroyed);
});

test('what is still unsent at the end gets the deadline too; a finished response cancels it', async (t) => {
  const stalled = setup();
  void stalled.out.write('0123456789');
  stalled.ac.abort();
  await flush();
  stalled.out.end();
  await stalled.clock.advance(1000);
  t.true(stalled.res.destroyed, 'a peer that never reads does not keep the socket after the end');

  const reading = setup();
  void reading.out.write('0123456789');
  reading.ac.abort();
  await flush();
  reading.out.end();
  reading.res.release();
  await flush();
  t.true(reading.res.writableFinished);
  t.is(reading.clock.pending, 0, 'the deadline was cancelled');
  t.deepEqual(reading.res.taken, ['0123456789']);
});

test('offer writes only while the peer keeps up', async (t) => {
  const { res, out } = setup();
  t.true(out.offer('a'));
  void out.write('0123456789');
  t.false(out.offer('bookmark'), 'a heartbeat is dropped while the peer is behind');
  res.release();
  await flush();
  t.deepEqual(res.taken, ['a', '0123456789']);
});
