import test from 'ava';
import fc from 'fast-check';
import { JsonObjectSplitter, encodeTerminalSize, exitStatus, parseExitStatus, parseTerminalSize } from '../../../../common/stream/remotecommand';
import { decodeChannelMessage, encodeChannelMessage, encodeCloseSignal, negotiateWsProtocol, portPrefix, wsProtocolTraits, WS_EXEC_PROTOCOLS } from '../../../../common/stream/ws-channel';
import { errorBody } from '../../../../common/stream/ws-exec';
import { negotiateStreamProtocol, offeredProtocols } from '../../../../common/stream/spdy-upgrade';
import { execOptionsFromQuery } from '../../../../common/stream/exec-streams';

test('binary channel messages: the channel byte, then the data; any channel and bytes round-trip', (t) => {
  t.deepEqual([...(encodeChannelMessage(1, Buffer.from('hi'), false) as Buffer)], [1, 0x68, 0x69]);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4 }), fc.uint8Array({ maxLength: 64 }), (ch, bytes) => {
      const m = decodeChannelMessage(encodeChannelMessage(ch, Buffer.from(bytes), false), { base64: false, closeSignal: true });
      t.deepEqual(m, { kind: 'data', channel: ch, data: Buffer.from(bytes) });
    }),
    { numRuns: 100 },
  );
});

test('base64 protocols: the channel as an ASCII digit, the data base64, as text', (t) => {
  const msg = encodeChannelMessage(2, Buffer.from('err'), true);
  t.is(msg, '2ZXJy');
  t.deepEqual(decodeChannelMessage('1aGk=', { base64: true, closeSignal: false }), { kind: 'data', channel: 1, data: Buffer.from('hi') });
  t.throws(() => decodeChannelMessage('xaGk=', { base64: true, closeSignal: false }), { message: /invalid channel/ });
});

test('v5 close signal: [255, channel] closes that channel; older protocols read 255 as a channel of data', (t) => {
  t.deepEqual([...encodeCloseSignal(0)], [255, 0]);
  t.deepEqual(decodeChannelMessage(Buffer.from([255, 0]), { base64: false, closeSignal: true }), { kind: 'close', channel: 0 });
  t.deepEqual(decodeChannelMessage(Buffer.from([255, 0]), { base64: false, closeSignal: false }), { kind: 'data', channel: 255, data: Buffer.from([0]) });
  t.throws(() => decodeChannelMessage(Buffer.from([255, 0, 1]), { base64: false, closeSignal: true }));
  t.throws(() => decodeChannelMessage(Buffer.alloc(0), { base64: false, closeSignal: true }), { message: 'empty message' });
});

test('protocol traits and negotiation follow the client\'s order among what is served', (t) => {
  t.deepEqual(wsProtocolTraits('v5.channel.k8s.io'), { base64: false, closeSignal: true, statusErrors: true, resize: true });
  t.deepEqual(wsProtocolTraits('v4.base64.channel.k8s.io'), { base64: true, closeSignal: false, statusErrors: true, resize: true });
  t.deepEqual(wsProtocolTraits('channel.k8s.io'), { base64: false, closeSignal: false, statusErrors: false, resize: false });
  t.is(negotiateWsProtocol(['v9.channel.k8s.io', 'v4.channel.k8s.io', 'v5.channel.k8s.io'], WS_EXEC_PROTOCOLS), 'v4.channel.k8s.io');
  t.is(negotiateWsProtocol(['nope'], WS_EXEC_PROTOCOLS), undefined);
  t.deepEqual([...portPrefix(8080)], [0x90, 0x1f]);
});

test('SPDY protocol negotiation: repeated headers and lists; none offered means channel.k8s.io; only unknown ones is an error naming both lists', (t) => {
  const offered = offeredProtocols({ 'x-stream-protocol-version': ['v4.channel.k8s.io', 'v3.channel.k8s.io, v2.channel.k8s.io'] });
  t.deepEqual(offered, ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io']);
  t.deepEqual(negotiateStreamProtocol(['v3.channel.k8s.io', 'v4.channel.k8s.io'], ['v4.channel.k8s.io', 'v3.channel.k8s.io']), { protocol: 'v3.channel.k8s.io' });
  t.deepEqual(negotiateStreamProtocol([], ['v4.channel.k8s.io', 'channel.k8s.io']), { protocol: 'channel.k8s.io' });
  t.deepEqual(negotiateStreamProtocol(['v9'], ['v4.channel.k8s.io']), { error: 'unable to upgrade: unable to negotiate protocol: client supports [v9], server accepts [v4.channel.k8s.io]' });
});

test('exit status: Success for 0, NonZeroExitCode with an ExitCode cause otherwise, InternalError for runtime errors; read back the same', (t) => {
  t.like(exitStatus({ exitCode: 0 }), { kind: 'Status', status: 'Success' });
  t.like(exitStatus({ exitCode: 42 }, ['sh', '-c', 'exit 42']), {
    status: 'Failure',
    reason: 'NonZeroExitCode',
    message: 'command terminated with non-zero exit code: error executing command [sh -c exit 42], exit code 42',
    details: { causes: [{ reason: 'ExitCode', message: '42' }] },
  });
  t.like(exitStatus({ error: 'boom' }), { status: 'Failure', reason: 'InternalError', message: 'boom' });
  fc.assert(fc.property(fc.integer({ min: 0, max: 255 }), (code) => t.deepEqual(parseExitStatus(JSON.stringify(exitStatus({ exitCode: code }))), { exitCode: code })), { numRuns: 50 });
  t.deepEqual(parseExitStatus(''), { exitCode: 0 });
  t.deepEqual(parseExitStatus('plain text error'), { error: 'plain text error' });
});

test('the error stream before v4 carries text: nothing for success, the message otherwise', (t) => {
  t.is(errorBody({ exitCode: 0 }, ['true'], false), undefined);
  t.is(errorBody({ exitCode: 2 }, ['false'], false), 'command terminated with non-zero exit code: error executing command [false], exit code 2');
  t.is(errorBody({ error: 'no such container' }, [], false), 'no such container');
  t.is(JSON.parse(errorBody({ exitCode: 0 }, [], true)!).status, 'Success');
});

test('terminal sizes: Go field names in any case, bounded; back-to-back documents split whole', (t) => {
  t.deepEqual(parseTerminalSize(encodeTerminalSize({ width: 80, height: 24 })), { width: 80, height: 24 });
  t.deepEqual(parseTerminalSize('{"width":1,"height":2}'), { width: 1, height: 2 });
  t.is(parseTerminalSize('{"Width":-1,"Height":2}'), undefined);
  t.is(parseTerminalSize('{"Width":"80","Height":2}'), undefined);
  t.is(parseTerminalSize('nope'), undefined);
  const s = new JsonObjectSplitter();
  t.deepEqual(s.push('{"Width":1,"Height":2}{"Wid'), ['{"Width":1,"Height":2}']);
  t.deepEqual(s.push('th":3,"Height":"}"}'), ['{"Width":3,"Height":"}"}']);
});

test('exec query: repeated command, ParseBool spellings, stderr dropped with a tty (as upstream)', (t) => {
  const q = new URLSearchParams('command=sh&command=-c&command=echo%20hi&stdin=true&stdout=1&stderr=1&tty=T');
  t.deepEqual(execOptionsFromQuery(q), { command: ['sh', '-c', 'echo hi'], stdin: true, stdout: true, stderr: false, tty: true });
  t.deepEqual(execOptionsFromQuery(new URLSearchParams('command=ls&stdout=false&stderr=0')), { command: ['ls'], stdin: false, stdout: false, stderr: false, tty: false });
});
