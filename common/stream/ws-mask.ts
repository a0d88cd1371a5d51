/**
 * WebSocket masking four bytes at a time for the `ws` library. Every frame a client sends is
 * masked (RFC 6455 5.3) and the server unmasks it; without its optional native addon (bufferutil,
 * not installed) ws does it a byte at a time in JavaScript, ~6 ns a byte here: the agent's
 * biggest cost on a port-forward from kubectl 1.31+ (SPDY tunnelled in WebSocket) or a large
 * exec stdin, ahead of TLS. XOR by 32-bit words is ~3x faster.
 *
 * ws 8 takes its mask functions from `websocketMask`/`websocketUnmask` on node:http when a
 * runtime provides them there, read once when ws is loaded; importing this module before 'ws'
 * installs ours (agent/server/stream-handler.ts does). A runtime that already has them keeps its own.
 */
import http from 'node:http';

/** XORs buf[i] with mask[(phase + i) & 3] in place. */
function xorInPlace(buf: Uint8Array, mask: Uint8Array, phase: number): void {
  const n = buf.length;
  let i = 0;
  const head = Math.min(n, (4 - (buf.byteOffset & 3)) & 3);
  for (; i < head; i++) buf[i] ^= mask[(phase + i) & 3];
  const words = (n - i) >>> 2;
  if (words > 0) {
    const p = phase + i;
    // The four mask bytes as one little- or big-endian word, in memory order from position p.
    const bytes = new Uint8Array([mask[p & 3], mask[(p + 1) & 3], mask[(p + 2) & 3], mask[(p + 3) & 3]]);
    const m = new Uint32Array(bytes.buffer)[0];
    const u = new Uint32Array(buf.buffer, buf.byteOffset + i, words);
    for (let w = 0; w < words; w++) u[w] ^= m;
    i += words * 4;
  }
  for (; i < n; i++) buf[i] ^= mask[(phase + i) & 3];
}

/** ws's unmask: the payload unmasked in place. */
export function unmask(buffer: Buffer, mask: Buffer): void {
  xorInPlace(buffer, mask, 0);
}

/** ws's mask: source masked into output at offset (a copy, then the XOR in place). */
export function mask(source: Buffer, maskBytes: Buffer, output: Buffer, offset: number, length: number): void {
  output.set(source.subarray(0, length), offset);
  xorInPlace(output.subarray(offset, offset + length), maskBytes, 0);
}

const hooks = http as unknown as { websocketMask?: typeof mask; websocketUnmask?: typeof unmask };
hooks.websocketMask ??= mask;
hooks.websocketUnmask ??= unmask;
