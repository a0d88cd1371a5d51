import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import {
  AuthenticationConfigController,
  RELOAD_TIMESTAMP_METRIC,
  RELOADS_TOTAL_METRIC,
  type LoadedAuthenticationConfig,
} from '../../../../apiserver/authn/authentication-config-controller';
import { MetricsRegistry } from '../../../../apiserver/authn/metrics';
import { FakeClock } from '../controllers/store-fixture';

const doc = (issuer: string, anonymous = '') => `apiVersion: apiserver.config.svc.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${issuer}
    audiences: [svc]
  claimMappings:
    username:
      claim: sub
      prefix: ''
${anonymous}`;

function setup(t: { teardown(f: () => void): void }, text: string) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-h11-acfg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'authn.yaml');
  writeFileSync(path, text);
  const applied: LoadedAuthenticationConfig[] = [];
  const metrics = new MetricsRegistry();
  const clock = new FakeClock();
  const c = new AuthenticationConfigController({ path, validate: {}, apply: (x) => applied.push(x), metrics, now: clock.now, log: pino({ level: 'silent' }), pollIntervalMs: 60_000, debounceMs: 10 });
  return { c, path, applied, metrics, clock };
}

test('loads at start; a bad file refuses to start naming the field', (t) => {
  const ok = setup(t, doc('https://a.example'));
  t.is(ok.c.loadInitial().jwt[0].config.issuer.url, 'https://a.example');
  t.is(ok.applied.length, 1);
  const bad = setup(t, doc('http://a.example'));
  t.throws(() => bad.c.loadInitial(), { message: /authn\.yaml: jwt\[0\]\.issuer\.url: .*https/ });
  t.throws(() => setup(t, 'kind: AuthenticationConfiguration\napiVersion: apiserver.config.svc.io/v1\njwt: [1]\n').c.loadInitial(), { message: /jwt\[0\]: Invalid value/ });
});

test('reload applies a changed valid file, keeps the old one on an invalid change, and records metrics', (t) => {
  const s = setup(t, doc('https://a.example'));
  s.c.loadInitial();
  t.false(s.c.reload()); // unchanged
  writeFileSync(s.path, doc('https://b.example', 'anonymous:\n  enabled: false\n'));
  s.clock.advance(5000);
  t.true(s.c.reload());
  t.is(s.applied.at(-1)!.jwt[0].config.issuer.url, 'https://b.example');
  t.deepEqual(s.applied.at(-1)!.anonymous, { enabled: false });
  const ts = s.metrics.gauge(RELOAD_TIMESTAMP_METRIC, '');
  t.is(ts.value({ status: 'success' }), s.clock.ms / 1000);
  writeFileSync(s.path, doc('ftp://c.example'));
  s.clock.advance(5000);
  t.false(s.c.reload());
  t.false(s.c.reload()); // the same bad content is reported once
  t.is(s.applied.length, 2);
  t.is(ts.value({ status: 'failure' }), s.clock.ms / 1000);
  t.is(s.metrics.counter(RELOADS_TOTAL_METRIC, '').value({ status: 'failure' }), 1);
  const text = s.metrics.render();
  t.regex(text, /# TYPE apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds gauge/);
  t.regex(text, /apiserver_authentication_config_controller_automatic_reloads_total\{status="success"\} 1/);
});

test('run() notices a file change through file system events', async (t) => {
  const s = setup(t, doc('https://a.example'));
  s.c.loadInitial();
  const ac = new AbortController();
  const run = s.c.run(ac.signal);
  const changed = new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (s.applied.length === 2) {
        clearInterval(check);
        resolve();
      }
    }, 20);
  });
  await new Promise((r) => setTimeout(r, 50));
  writeFileSync(s.path, doc('https://b.example'));
  await changed;
  t.is(s.applied[1].jwt[0].config.issuer.url, 'https://b.example');
  ac.abort();
  await run;
});
