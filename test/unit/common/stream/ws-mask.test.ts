import test from 'ava';
import fc from 'fast-check';
import http from 'node:http';
import { mask, unmask } from '../../../../common/stream/ws-mask';

const reference = (data: Uint8Array, m: Uint8Array): Buffer => Buffer.from(data.map((b, i) => b ^ m[i & 3]));

test('unmask XORs every byte with the mask, whatever the buffer\'s alignment and length', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ minLength: 4, maxLength: 4 }), fc.nat(7), (data, m, skew) => {
      const backing = Buffer.alloc(data.length + skew);
      const buf = backing.subarray(skew);
      buf.set(data);
      unmask(buf, Buffer.from(m));
      return buf.equals(reference(data, m));
    }),
  );
  t.pass('property held');
});

test('mask writes the masked source at the offset of the output and nothing else', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ minLength: 4, maxLength: 4 }), fc.nat(9), fc.nat(5), (data, m, offset, skew) => {
      const source = Buffer.alloc(data.length + skew).subarray(skew);
      source.set(data);
      const output = Buffer.alloc(offset + data.length + 3, 0xee);
      mask(source, Buffer.from(m), output, offset, data.length);
      return (
        output.subarray(offset, offset + data.length).equals(reference(data, m)) &&
        output.subarray(0, offset).every((b) => b === 0xee) &&
        output.subarray(offset + data.length).every((b) => b === 0xee) &&
        source.equals(Buffer.from(data))
      );
    }),
  );
  t.pass('property held');
});

test('the functions are installed where ws 8 looks for them (node:http)', (t) => {
  const hooks = http as unknown as { websocketMask?: unknown; websocketUnmask?: unknown };
  t.is(hooks.websocketMask, mask);
  t.is(hooks.websocketUnmask, unmask);
});
