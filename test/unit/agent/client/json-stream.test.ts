import test from 'ava';
import { JsonDocumentSplitter } from '../../../../agent/client/json-stream';

test('splits documents across arbitrary chunk boundaries, with or without newlines', (t) => {
  const docs = ['{"type":"ADDED","object":{"a":[1,{"b":2}]}}', '{"type":"MODIFIED","object":{}}', '{"x":"y"}'];
  const text = docs[0] + '\n' + docs[1] + docs[2] + '\n';
  for (let size = 1; size <= text.length; size += 7) {
    const s = new JsonDocumentSplitter();
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(...s.push(Buffer.from(text.slice(i, i + size))));
    t.deepEqual(out, docs, `chunk size ${size}`);
    t.false(s.pending);
  }
});

test('braces and escaped quotes inside strings do not confuse it', (t) => {
  const doc = JSON.stringify({ type: 'ADDED', object: { msg: 'a } { " \\ ] [', n: '\\"}' } });
  const s = new JsonDocumentSplitter();
  t.deepEqual(s.push(doc.slice(0, 20)), []);
  t.true(s.pending);
  t.deepEqual(s.push(doc.slice(20)), [doc]);
  t.deepEqual(JSON.parse(doc).object.msg, 'a } { " \\ ] [');
});

test('a multi-byte character split between chunks survives', (t) => {
  const doc = '{"name":"nœud-ü"}';
  const bytes = Buffer.from(doc);
  const cut = bytes.indexOf(0xc5) + 1; // inside "œ"
  const s = new JsonDocumentSplitter();
  t.deepEqual([...s.push(bytes.subarray(0, cut)), ...s.push(bytes.subarray(cut))], [doc]);
});

test('garbage between documents is an error', (t) => {
  const s = new JsonDocumentSplitter();
  t.throws(() => s.push('{"a":1} nope'), { message: /unexpected "n"/ });
});
