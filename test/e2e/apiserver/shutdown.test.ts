import test from 'ava';
import { request } from 'undici';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot, startApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

// --shutdown-delay-duration: on SIGTERM readyz fails first while requests are still served,
// open watches end, and the process exits 0 (spec 4.8).
test('graceful shutdown: readyz fails first, requests finish, exit 0', async (t) => {
  const s = await startApiServer({ args: ['--shutdown-delay-duration=3s'] });
  const watch = await request(`${s.url}/api/v1/namespaces/default/configmaps?watch=1`, { dispatcher: s.admin });
  const watchEnded = (async () => {
    for await (const _ of watch.body) void _;
    return true;
  })();
  s.proc.kill('SIGTERM');
  let sawNotReady = false;
  const end = Date.now() + 2500;
  while (Date.now() < end && !sawNotReady) {
    const r = await call(s.anonymous, 'GET', `${s.url}/readyz?verbose`);
    if (r.status === 500) {
      sawNotReady = true;
      t.regex(r.text, /\[-\]shutdown failed/);
    }
  }
  t.true(sawNotReady, 'readyz should fail during the shutdown delay');
  const still = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/default`);
  t.is(still.status, 200, 'requests are still served during the delay');
  t.is((await call(s.anonymous, 'GET', `${s.url}/livez`)).status, 200);
  t.true(await watchEnded);
  t.is(await s.stop(), 0);
});

test('livez grace period and per-check endpoints', async (t) => {
  const s = await startApiServer({ args: ['--livez-grace-period=30s'] });
  try {
    const r = await call(s.anonymous, 'GET', `${s.url}/livez?verbose`);
    t.is(r.status, 200);
    t.regex(r.text, /livez check passed/);
    t.is((await call(s.anonymous, 'GET', `${s.url}/readyz/shutdown`)).text, 'ok');
    t.is((await call(s.anonymous, 'GET', `${s.url}/healthz`)).text, 'ok');
  } finally {
    await s.stop();
  }
});

test('bad flags exit 2 with a clear message, never a stack trace', (t) => {
  const r = spawnSync(join(repoRoot, 'bin', 'svc-apiserver'), ['--secure-port=notaport'], { encoding: 'utf8' });
  t.is(r.status, 2);
  t.regex(r.stderr, /invalid argument "notaport" for --secure-port/);
  t.notRegex(r.stderr, /at .*\.js:\d+/);
  const u = spawnSync(join(repoRoot, 'bin', 'svc-apiserver'), ['--no-such-flag'], { encoding: 'utf8' });
  t.is(u.status, 2);
  t.regex(u.stderr, /unknown flag: --no-such-flag/);
});
