/**
 * send() through a real Node http server: protobuf bodies arrive byte for byte, and a small one
 * leaves in the same socket write as the header block (a JSON string body did already; a Buffer
 * body was a second chunk of a writev).
 */
import test from 'ava';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { decodeObject, encodeObject, PROTOBUF_MEDIA_TYPE } from '../../../../apiserver/codec/envelope';
import { configMapSchema } from '../../../../apiserver/registry/types/configmaps';
import { send } from '../../../../apiserver/server/respond';

type Json = Record<string, unknown>;

/** Serves obj once as protobuf; answers the body, its headers, and how many chunks each socket write of the response carried. */
async function serve(obj: Json, gzip = false): Promise<{ bytes: Buffer; writes: number[]; headers: IncomingMessage['headers'] }> {
  const writes: number[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => send(req, res, 200, obj, { protobuf: configMapSchema, compress: gzip }));
  server.on('connection', (socket: Socket) => {
    // net.Socket funnels _write (one chunk) and _writev (several) through _writeGeneric; Node's
    // http ends a response with an empty chunk, which carries nothing and is not counted.
    const s = socket as unknown as { _writeGeneric: (writev: boolean, data: unknown, ...rest: unknown[]) => unknown };
    const original = s._writeGeneric.bind(socket);
    const length = (c: unknown) => ((c as { chunk?: { length: number } }).chunk ?? (c as { length: number })).length;
    s._writeGeneric = (writev, data, ...rest) => {
      writes.push((writev ? (data as unknown[]) : [data]).filter((c) => length(c) > 0).length);
      return original(writev, data, ...rest);
    };
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      const headers = { accept: PROTOBUF_MEDIA_TYPE, connection: 'close', ...(gzip ? { 'accept-encoding': 'gzip' } : {}) };
      const req = request({ host: '127.0.0.1', port, path: '/', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ bytes: Buffer.concat(chunks), writes, headers: res.headers }));
      });
      req.on('error', reject);
      req.end();
    });
  } finally {
    server.close();
  }
}

/** A ConfigMap whose binaryData holds size bytes of every value. */
function withBytes(size: number): Json {
  const raw = Buffer.alloc(size);
  for (let i = 0; i < size; i++) raw[i] = (i * 7 + (i >> 8)) & 0xff;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: 'ns', resourceVersion: '5' }, binaryData: { b: raw.toString('base64') } };
}

test('a small protobuf body leaves in the one socket write that carries the header block', async (t) => {
  const { bytes, writes, headers } = await serve(withBytes(300));
  t.is(headers['content-type'], PROTOBUF_MEDIA_TYPE);
  t.deepEqual(bytes, encodeObject(configMapSchema, withBytes(300)));
  t.deepEqual(writes, [1], 'one socket write of one chunk with something in it: the header block and the body');
});

test('every byte value arrives as written, below, at and past the size sent in one write', async (t) => {
  for (const size of [256, 65_000, 70_000, 200_000]) {
    const obj = withBytes(size);
    const { bytes, headers } = await serve(obj);
    t.deepEqual(bytes, encodeObject(configMapSchema, obj), `size ${size}`);
    t.is(Number(headers['content-length']), bytes.length);
    t.deepEqual(decodeObject(configMapSchema, bytes).binaryData, obj.binaryData);
  }
});

test('a compressed protobuf answer is the gzip of the same bytes, at sizes encoded to text and to a Buffer', async (t) => {
  // A body up to 64 KiB is encoded straight to a latin1 string (envelope.ts encodeObjectText); gzip
  // must compress its bytes, not its UTF-8 form, and Content-Length count the compressed bytes.
  for (const size of [2_000, 70_000]) {
    const obj = withBytes(size);
    const { bytes, headers } = await serve(obj, true);
    t.is(headers['content-encoding'], 'gzip', `size ${size}`);
    t.is(Number(headers['content-length']), bytes.length);
    t.deepEqual(gunzipSync(bytes), encodeObject(configMapSchema, obj), `size ${size}`);
  }
});
