import test from 'ava';
import fc from 'fast-check';
import { createServer, connect, type Socket } from 'node:net';
import { SPDY3_DICTIONARY } from '../../../../common/stream/spdy-dictionary';
import { FrameDecoder, encodeFrame, type SpdyFrame, SpdyProtocolError } from '../../../../common/stream/spdy-frame';
import { HeaderCompressor, HeaderDecompressor, decodeHeaderBlock, encodeHeaderBlock } from '../../../../common/stream/spdy-header-codec';
import { SpdySession, type SpdySessionOptions } from '../../../../common/stream/spdy-connection';
import type { SpdyStream } from '../../../../common/stream/spdy-stream';

test('the SPDY/3 dictionary is the draft\'s 1,423 bytes (Adler-32 pinned: zlib names the dictionary by it)', (t) => {
  t.is(SPDY3_DICTIONARY.length, 1423);
  t.is(SPDY3_DICTIONARY.subarray(0, 11).toString('latin1'), '\x00\x00\x00\x07options');
  t.true(SPDY3_DICTIONARY.toString('latin1').endsWith(',utf-,*,enq=0.'));
  t.is(adler(SPDY3_DICTIONARY), 3821447106);
});

function adler(b: Buffer): number {
  let a = 1;
  let s = 0;
  for (const x of b) {
    a = (a + x) % 65521;
    s = (s + a) % 65521;
  }
  return ((s << 16) | a) >>> 0;
}

const frames: SpdyFrame[] = [
  { type: 'data', streamId: 5, flags: 1, data: Buffer.from('hello') },
  { type: 'syn_stream', streamId: 3, associatedId: 0, priority: 2, flags: 2, headerBlock: Buffer.from([1, 2, 3]) },
  { type: 'syn_reply', streamId: 3, flags: 0, headerBlock: Buffer.from([9]) },
  { type: 'headers', streamId: 3, flags: 1, headerBlock: Buffer.alloc(0) },
  { type: 'rst_stream', streamId: 7, status: 5 },
  { type: 'settings', flags: 0, entries: [{ flags: 0, id: 7, value: 1 << 20 }, { flags: 1, id: 4, value: 100 }] },
  { type: 'ping', id: 0xfffffffe },
  { type: 'goaway', lastGoodStreamId: 9, status: 0 },
  { type: 'window_update', streamId: 0, delta: 0x7fffffff },
];

test('every frame type round-trips, whole or cut into any pieces', (t) => {
  const wire = Buffer.concat(frames.map(encodeFrame));
  t.deepEqual(new FrameDecoder().push(wire), frames);
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: wire.length - 1 }), { maxLength: 10 }), (cuts) => {
      const d = new FrameDecoder();
      const out: SpdyFrame[] = [];
      let at = 0;
      for (const c of [...new Set(cuts)].sort((a, b) => a - b)) {
        out.push(...d.push(wire.subarray(at, c)));
        at = c;
      }
      out.push(...d.push(wire.subarray(at)));
      t.deepEqual(out, frames);
    }),
    { numRuns: 50 },
  );
});

test('control frames carry version 3 and the control bit; a frame over the limit or of another version is a protocol error', (t) => {
  const ping = encodeFrame({ type: 'ping', id: 1 });
  t.deepEqual([...ping.subarray(0, 4)], [0x80, 0x03, 0x00, 0x06]);
  t.throws(() => new FrameDecoder(16).push(encodeFrame({ type: 'data', streamId: 1, flags: 0, data: Buffer.alloc(17) })), { instanceOf: SpdyProtocolError });
  const v2 = Buffer.from(ping);
  v2[1] = 2;
  t.throws(() => new FrameDecoder().push(v2), { instanceOf: SpdyProtocolError, message: /version 2/ });
});

test('header blocks: names lower-cased, several values joined by NUL, duplicates refused', (t) => {
  const block = encodeHeaderBlock({ StreamType: 'stdout', port: ['80', '81'] });
  t.deepEqual(decodeHeaderBlock(block), { streamtype: 'stdout', port: ['80', '81'] });
  const dup = Buffer.concat([encodeHeaderBlock({ a: '1', b: '2' })]);
  dup.write('a', dup.length - 6, 'latin1'); // rename b to a
  t.throws(() => decodeHeaderBlock(dup), { message: /twice/ });
  t.throws(() => decodeHeaderBlock(block.subarray(0, block.length - 1)), { instanceOf: SpdyProtocolError });
});

test('header compression shares one zlib context per direction under the dictionary', async (t) => {
  const c = new HeaderCompressor();
  const d = new HeaderDecompressor();
  const first = await c.compress({ streamtype: 'error', 'x-stream-protocol-version': 'v4.channel.k8s.io' });
  // A zlib stream with a preset dictionary: FDICT set and the dictionary's Adler-32 after the header.
  t.is(first[1] & 0x20, 0x20);
  t.is(first.readUInt32BE(2), 3821447106);
  t.deepEqual(await d.decompress(first), { streamtype: 'error', 'x-stream-protocol-version': 'v4.channel.k8s.io' });
  const second = await c.compress({ streamtype: 'error', 'x-stream-protocol-version': 'v4.channel.k8s.io' });
  t.true(second.length < first.length / 2, 'the second block refers back to the first');
  t.deepEqual(await d.decompress(second), { streamtype: 'error', 'x-stream-protocol-version': 'v4.channel.k8s.io' });
  // A decompressor that missed the first block cannot read the second.
  await t.throwsAsync(new HeaderDecompressor().decompress(second), { instanceOf: SpdyProtocolError });
  c.close();
  d.close();
});

/** A connected client/server session pair over loopback TCP. */
async function pair(server: Partial<SpdySessionOptions>, client: Partial<SpdySessionOptions> = {}): Promise<{ s: SpdySession; c: SpdySession; sockets: Socket[]; close: () => void }> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  const accepted = new Promise<Socket>((r) => srv.once('connection', r));
  const cs = connect(port, '127.0.0.1');
  const ss = await accepted;
  srv.close();
  const s = new SpdySession(ss, { server: true, ...server });
  const c = new SpdySession(cs, { server: false, ...client });
  return { s, c, sockets: [ss, cs], close: () => { s.destroy(); c.destroy(); } };
}

function collect(s: SpdyStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  s.on('data', (b: Buffer) => parts.push(b));
  return new Promise((resolve, reject) => {
    s.on('end', () => resolve(Buffer.concat(parts)));
    s.on('error', reject);
  });
}

test('streams: SYN_STREAM headers reach the peer, SYN_REPLY completes the open, data flows both ways with FIN half-closes', async (t) => {
  const got: SpdyStream[] = [];
  const { c, close } = await pair({
    onStream: (st) => {
      got.push(st);
      void st.reply();
      // Echo in upper case, then close our side once the peer closed its own.
      const parts: Buffer[] = [];
      st.on('data', (b: Buffer) => parts.push(b));
      st.on('end', () => st.end(Buffer.concat(parts).toString().toUpperCase()));
    },
  });
  const st = await c.openStream({ streamtype: 'stdin', port: '80' });
  t.is(st.id, 1);
  const echoed = collect(st);
  st.end('hello spdy');
  t.is((await echoed).toString(), 'HELLO SPDY');
  t.deepEqual(got[0].headers, { streamtype: 'stdin', port: '80' });
  const second = await c.openStream({ streamtype: 'stdout' });
  t.is(second.id, 3);
  await c.ping();
  close();
});

test('a reset stream is destroyed on both sides, a refused one rejects its open', async (t) => {
  let serverSide: SpdyStream | undefined;
  const { c, s, close } = await pair({
    onStream: (st) => {
      if (st.headers.streamtype === 'refuse') {
        st.reset(3);
        return;
      }
      serverSide = st;
      void st.reply();
    },
  });
  await t.throwsAsync(c.openStream({ streamtype: 'refuse' }), { message: /reset \(status 3\)/ });
  const st = await c.openStream({ streamtype: 'data' });
  const closed = new Promise((r) => serverSide!.once('close', r));
  st.destroy();
  await closed;
  t.is(serverSide!.resetStatus, 5);
  t.is(s.openStreams, 0);
  t.is(c.openStreams, 0);
  close();
});

test('flow control: a sender that keeps windows stops at 64 KiB until the reader takes data, then delivers everything', async (t) => {
  let serverSide: SpdyStream | undefined;
  let opened!: () => void;
  const ready = new Promise<void>((resolve) => (opened = resolve));
  // Both sides keep windows: the server acknowledges what its reader takes.
  const { c, close } = await pair(
    {
      peerKeepsWindows: true,
      onStream: (st) => {
        serverSide = st;
        void st.reply();
        opened();
      },
    },
    { peerKeepsWindows: true },
  );
  const st = await c.openStream({ streamtype: 'data' });
  await ready;
  serverSide!.pause();
  const total = 300 * 1024;
  let written = false;
  st.write(Buffer.alloc(total, 7), () => {
    written = true;
  });
  // The reader takes nothing: the sender has spent its whole window and waits.
  await until(() => st.sendWindow.size === 0);
  t.false(written);
  t.is(c.sendWindow.size, 0);
  const received = collect(serverSide!);
  serverSide!.resume();
  st.end();
  const all = await received;
  t.is(all.length, total);
  t.true(written);
  close();
});

test('without window updates from the peer (Go\'s spdystream), the default sender does not wait on windows', async (t) => {
  let serverSide: SpdyStream | undefined;
  let resolveOpened!: () => void;
  const opened = new Promise<void>((resolve) => (resolveOpened = resolve));
  const { c, close } = await pair({
    onStream: (st) => {
      serverSide = st;
      void st.reply();
      resolveOpened();
    },
  });
  const st = await c.openStream({ streamtype: 'data' });
  await opened;
  const received = collect(serverSide!);
  st.end(Buffer.alloc(200 * 1024, 1));
  t.is((await received).length, 200 * 1024);
  close();
});

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error('condition not reached');
}

test('the session ends with its socket: every stream is destroyed and close is emitted once', async (t) => {
  let serverSide: SpdyStream | undefined;
  const { c, s, sockets } = await pair({
    onStream: (st) => {
      serverSide = st;
      void st.reply();
    },
  });
  await c.openStream({ streamtype: 'data' });
  let closes = 0;
  s.on('close', () => closes++);
  const destroyed = new Promise((r) => serverSide!.once('close', r));
  sockets[1].destroy();
  await destroyed;
  await until(() => s.isClosed);
  t.is(closes, 1);
  t.is(s.openStreams, 0);
});

test('after close() the session writes nothing more: data the peer still sends is read without a write after the end (which would destroy the socket with our last frames queued)', async (t) => {
  let serverSide: SpdyStream | undefined;
  // The server acknowledges what it reads (a peer that keeps windows), so reading late data would write.
  const { c, s, sockets, close } = await pair({
    peerKeepsWindows: true,
    onStream: (st) => {
      serverSide = st;
      void st.reply();
    },
  });
  const errors: Error[] = [];
  sockets[0].on('error', (e) => errors.push(e));
  const st = await c.openStream({ streamtype: 'resize' });
  const fromServer = collect(st);
  const late: Buffer[] = [];
  serverSide!.on('data', (b: Buffer) => late.push(b));
  await new Promise<void>((resolve) => serverSide!.end('last words', resolve));
  const ended = new Promise((r) => sockets[0].once('finish', r));
  s.close();
  await ended;
  // A resize the client sent as the server was closing: reading it would acknowledge it (WINDOW_UPDATE).
  st.write('{"Width":80,"Height":24}');
  await until(() => late.length > 0);
  await new Promise((r) => setImmediate(r));
  t.is((await fromServer).toString(), 'last words');
  t.is(Buffer.concat(late).toString(), '{"Width":80,"Height":24}');
  t.deepEqual(errors.map((e) => e.message), []);
  close();
});

/** A client session over a real TCP connection whose other end, `raw`, the test writes frames on by hand. */
async function rawPeer(): Promise<{ raw: Socket; c: SpdySession }> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const accepted = new Promise<Socket>((r) => srv.once('connection', r));
  const cs = connect((srv.address() as { port: number }).port, '127.0.0.1');
  const raw = await accepted;
  srv.close();
  return { raw, c: new SpdySession(cs, { server: false }) };
}

test('a peer that closes right after its last frames: they are all handled first, however long a header block before them takes to inflate', async (t) => {
  const { raw, c } = await rawPeer();
  const peer = new HeaderCompressor();
  const opening = c.openStream({ streamtype: 'stdout' });
  raw.write(encodeFrame({ type: 'syn_reply', streamId: 1, flags: 0, headerBlock: await peer.compress({}) }));
  const st = await opening;
  const got = new Promise<string>((resolve) => {
    const parts: Buffer[] = [];
    st.on('data', (b: Buffer) => parts.push(b));
    st.on('close', () => resolve(Buffer.concat(parts).toString()));
  });
  // A HEADERS frame (its block inflates asynchronously), the stream's last data with FIN, and the
  // connection's end, all at once: what kubelet's stream server does as an exec ends.
  const headers = encodeFrame({ type: 'headers', streamId: 1, flags: 0, headerBlock: await peer.compress({ 'x-late': 'yes' }) });
  raw.end(Buffer.concat([headers, encodeFrame({ type: 'data', streamId: 1, flags: 0, data: Buffer.from('the last ') }), encodeFrame({ type: 'data', streamId: 1, flags: 1, data: Buffer.from('output') })]));
  t.is(await got, 'the last output');
  await until(() => c.isClosed);
  peer.close();
});

test('towards a peer that keeps no windows (Go\'s spdystream) reading sends no WINDOW_UPDATE: the peer closes right after its last frames without reading on, and one arriving then makes its kernel answer with a TCP RST, which drops what it had not sent yet', async (t) => {
  const { raw, c } = await rawPeer();
  const fromClient: SpdyFrame[] = [];
  const decoder = new FrameDecoder();
  const pinged = new Promise<void>((resolve) => {
    raw.on('data', (b: Buffer) => {
      for (const f of decoder.push(b)) {
        fromClient.push(f);
        if (f.type === 'ping') resolve();
      }
    });
  });
  const peer = new HeaderCompressor();
  const opening = c.openStream({ streamtype: 'stdout' });
  raw.write(encodeFrame({ type: 'syn_reply', streamId: 1, flags: 0, headerBlock: await peer.compress({}) }));
  const st = await opening;
  const received = collect(st);
  // Twice the draft's 64 KiB window in 32 KiB frames, the last with FIN: a reader acknowledging
  // what it takes would send WINDOW_UPDATEs for the stream and the session on the way.
  const total = 4 * 32 * 1024 + 3;
  const frames: Buffer[] = [];
  for (let at = 0; at < total; at += 32 * 1024) {
    const data = Buffer.alloc(Math.min(32 * 1024, total - at), at / 1024);
    frames.push(encodeFrame({ type: 'data', streamId: 1, flags: at + data.length === total ? 1 : 0, data }));
  }
  raw.write(Buffer.concat(frames));
  t.is((await received).length, total);
  // Frames go out in submission order: once the ping has arrived, so has everything written before it.
  void c.ping().catch(() => undefined);
  await pinged;
  t.deepEqual(fromClient.map((f) => f.type), ['syn_stream', 'ping']);
  raw.end();
  await until(() => c.isClosed);
  peer.close();
});
