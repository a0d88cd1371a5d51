import test from 'ava';
import { Writable } from 'node:stream';
import { createLogger, scrubSecrets } from '../../../../agent/platform/logger';
import type { LogLevel } from '../../../../agent/config/types';

function capture(level: LogLevel) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, log: createLogger({ level, destination }) };
}

test('one JSON line per event with level, time, name and message', (t) => {
  const { lines, log } = capture('info');
  log.info({ node: 'n1' }, 'registered node');
  log.child({ component: 'lease' }).warn({ attempt: 2 }, 'renew failed');
  t.is(lines.length, 2);
  t.like(lines[0], { level: 30, name: 'svc-node', node: 'n1', msg: 'registered node' });
  t.regex(String(lines[0]['time']), /^\d{4}-\d\d-\d\dT/);
  t.like(lines[1], { level: 40, component: 'lease', attempt: 2, msg: 'renew failed' });
});

test('the level filters events', (t) => {
  const info = capture('info');
  info.log.debug({}, 'hidden');
  info.log.info({}, 'shown');
  t.deepEqual(info.lines.map((l) => l['msg']), ['shown']);
  const trace = capture('trace');
  trace.log.trace({}, 'deep');
  t.deepEqual(trace.lines.map((l) => l['msg']), ['deep']);
});

test('secret fields are redacted wherever they sit', (t) => {
  const { lines, log } = capture('info');
  log.info(
    {
      token: 'abcdef.0123456789abcdef',
      req: { headers: { authorization: 'Bearer eyJ', 'proxy-authorization': 'Basic x' } },
      bootstrap: { data: { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef' } },
      kubeconfig: { user: { 'client-key-data': 'LS0t', password: 'p' } },
      tls: { privateKey: 'PEM' },
    },
    'bootstrap',
  );
  const line = lines[0];
  const text = JSON.stringify(line);
  for (const secret of ['0123456789abcdef', 'eyJ', 'Basic x', 'LS0t', '"p"', 'PEM']) t.false(text.includes(secret), secret);
  t.like(line, { bootstrap: { data: { 'token-id': 'abcdef', 'token-secret': '[REDACTED]' } } });
});

test('token-shaped text is scrubbed from messages and errors', (t) => {
  const { lines, log } = capture('info');
  log.info('joining with token abcdef.0123456789abcdef');
  log.error({ err: new Error('401 for Authorization: Bearer s3cr3t.tok') }, 'request failed');
  t.is(lines[0]['msg'], 'joining with token abcdef.<redacted>');
  const err = lines[1]['err'] as { message: string; stack: string };
  t.is(err.message, '401 for Authorization: Bearer <redacted>');
  t.false(err.stack.includes('s3cr3t'));
  t.is(scrubSecrets('no secrets here'), 'no secrets here');
});
