import test from 'ava';
import fc from 'fast-check';
import { BackWriter } from '../../../../apiserver/codec/back-writer';
import { Reader } from '../../../../apiserver/codec/reader';

test('varints of every length, and negative integers over ten bytes as Go writes them', (t) => {
  const cases: Array<[number, number[]]> = [
    [0, [0]],
    [127, [0x7f]],
    [128, [0x80, 0x01]],
    [16383, [0xff, 0x7f]],
    [16384, [0x80, 0x80, 0x01]],
    [2 ** 28 - 1, [0xff, 0xff, 0xff, 0x7f]],
    [2 ** 28, [0x80, 0x80, 0x80, 0x80, 0x01]],
    [2 ** 32 - 1, [0xff, 0xff, 0xff, 0xff, 0x0f]],
  ];
  for (const [v, bytes] of cases) {
    const w = new BackWriter(1);
    w.varint(v);
    t.deepEqual([...w.finish()], bytes, String(v));
  }
  const w = new BackWriter(2);
  w.int64(-1);
  t.deepEqual([...w.finish()], [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  fc.assert(
    fc.property(fc.integer({ min: -(2 ** 53 - 1), max: 2 ** 53 - 1 }), (v) => {
      const x = new BackWriter(3);
      x.int64(v);
      return new Reader(x.finish()).int64() === v;
    }),
  );
});

test('strings of any text and length read back; the written bytes are the UTF-8 after its length', (t) => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 200 }), { maxLength: 20 }), (strings) => {
      // A tiny first buffer: every string makes it grow, with the output moved each time.
      const w = new BackWriter(1);
      for (let i = strings.length - 1; i >= 0; i--) w.string(strings[i]);
      const r = new Reader(w.finish());
      const back = strings.map(() => r.string());
      return r.pos === r.end && back.every((s, i) => Buffer.from(s, 'utf8').equals(Buffer.from(strings[i], 'utf8')));
    }),
  );
  const w = new BackWriter();
  w.string('héllo');
  t.deepEqual([...w.finish()], [6, 0x68, 0xc3, 0xa9, 0x6c, 0x6c, 0x6f]);
});

test('a mark survives the buffer growing: the length covers exactly what was written since', (t) => {
  // The regression: a mark taken as an offset into the first buffer was wrong once the output
  // had moved to a bigger one.
  const w = new BackWriter(8);
  const outer = w.mark();
  const inner = w.mark();
  w.raw(Buffer.alloc(300, 0x61));
  w.lengthSince(inner);
  w.byte(0x0a);
  w.lengthSince(outer);
  const out = w.finish();
  const r = new Reader(out);
  t.is(r.length(), 303);
  t.is(r.uint32(), 0x0a);
  t.is(r.length(), 300);
  t.is(r.pos + 300, out.length);
});

test('reset forgets the output and keeps the buffer', (t) => {
  const w = new BackWriter(16);
  w.string('x'.repeat(100));
  const grown = w.buf;
  w.reset();
  t.is(w.finish().length, 0);
  t.is(w.buf, grown);
  w.double(1.5);
  t.is(w.finish().readDoubleLE(0), 1.5);
});
