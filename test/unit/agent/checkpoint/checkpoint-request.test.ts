import test from 'ava';
import { archivePath, rfc3339 } from '../../../../agent/checkpoint/archive-path';
import { CheckpointRequestError, MAX_TIMEOUT_SECONDS, parseCheckpointRequest, parseTimeout } from '../../../../agent/checkpoint/checkpoint-request';

const q = (s = '') => new URLSearchParams(s);

test('parses namespace, pod, container and timeout', (t) => {
  t.deepEqual(parseCheckpointRequest('/checkpoint/default/web-0.x/app', q('timeout=30')), { namespace: 'default', pod: 'web-0.x', container: 'app', timeoutSeconds: 30 });
  t.is(parseCheckpointRequest('/checkpoint/default/web/app', q()).timeoutSeconds, 0);
  t.is(parseCheckpointRequest('/checkpoint/default/web/app', q('timeout=0')).timeoutSeconds, 0);
});

function code(f: () => unknown): number | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof CheckpointRequestError) return e.httpStatus;
    throw e;
  }
  return undefined;
}

test('path traversal, NUL, slashes and over-long names are 400; wrong shapes 404', (t) => {
  for (const p of ['/checkpoint/../web/app', '/checkpoint/default/..%2F..%2Fetc/app', '/checkpoint/default/web/%2E%2E', '/checkpoint/default/web%00/app', '/checkpoint/default/web/a%2Fb', `/checkpoint/default/${'a'.repeat(254)}/app`, `/checkpoint/${'n'.repeat(64)}/web/app`, '/checkpoint/default/web/%E0%A4%A', '/checkpoint/Default/web/app', '/checkpoint/default/web/a.b']) {
    t.is(code(() => parseCheckpointRequest(p, q())), 400, p);
  }
  for (const p of ['/checkpoint/default/web', '/checkpoint/default/web/app/extra', '/checkpoint//web/app', '/checkpoint/a/b/c/..']) {
    t.is(code(() => parseCheckpointRequest(p, q())), 404, p);
  }
});

test('timeouts: negative, non-integer, huge are 400 with a message naming the parameter', (t) => {
  for (const v of ['-1', '1.5', 'abc', '1e3', String(MAX_TIMEOUT_SECONDS + 1), '99999999999999999999999']) {
    const e = t.throws(() => parseTimeout(v), { instanceOf: CheckpointRequestError });
    t.is(e?.httpStatus, 400);
    t.regex(e?.message ?? '', /timeout/);
  }
  t.is(parseTimeout(String(MAX_TIMEOUT_SECONDS)), MAX_TIMEOUT_SECONDS);
  t.is(parseTimeout(null), 0);
});

test('the archive is named checkpoint-<pod>_<namespace>-<container>-<RFC3339>.tar under <root>/checkpoints', (t) => {
  const ms = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  t.is(rfc3339(ms), '2026-01-02T03:04:05Z');
  t.is(archivePath('/var/lib/svc-node', { namespace: 'default', pod: 'web', container: 'app' }, ms), '/var/lib/svc-node/checkpoints/checkpoint-web_default-app-2026-01-02T03:04:05Z.tar');
});
