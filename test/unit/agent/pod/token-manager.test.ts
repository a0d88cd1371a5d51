import test from 'ava';
import type { ApiClient } from '../../../../agent/client/api-client';
import { ApiTokenRequester, MAX_TTL_MS, TokenManager, type IssuedToken, type TokenRequester, type TokenSpec } from '../../../../agent/pod/token-manager';

const T0 = Date.parse('2026-01-01T00:00:00Z');

class FakeRequester implements TokenRequester {
  calls: { ns: string; sa: string; spec: TokenSpec }[] = [];
  fail: Error | undefined;
  constructor(private readonly clock: { ms: number }, private readonly grantSeconds?: number) {}
  request(ns: string, sa: string, spec: TokenSpec): Promise<IssuedToken> {
    this.calls.push({ ns, sa, spec });
    if (this.fail) return Promise.reject(this.fail);
    const seconds = this.grantSeconds ?? spec.expirationSeconds;
    return Promise.resolve({ token: `tok-${this.calls.length}`, expiresAt: this.clock.ms + seconds * 1000, expirationSeconds: seconds });
  }
}

const spec = (expirationSeconds = 3607, uid = 'u1'): TokenSpec => ({ audiences: [], expirationSeconds, pod: { name: 'p', uid } });

function setup(grantSeconds?: number) {
  const clock = { ms: T0 };
  const req = new FakeRequester(clock, grantSeconds);
  const tm = new TokenManager({ requester: req, now: () => clock.ms, random: () => 0 });
  return { clock, req, tm };
}

test('a token is reused until 80% of its lifetime has passed, then replaced', async (t) => {
  const { clock, req, tm } = setup();
  t.is(await tm.get('ns', 'default', spec()), 'tok-1');
  // 3607 s: refresh once less than 20% (721 s) is left, i.e. after 2886 s.
  clock.ms = T0 + 2886_000;
  t.is(await tm.get('ns', 'default', spec()), 'tok-1');
  t.is(req.calls.length, 1);
  clock.ms = T0 + 2886_001;
  t.is(await tm.get('ns', 'default', spec()), 'tok-2');
  t.is(req.calls.length, 2);
  // The new token is judged from its own issue time.
  clock.ms += 2000_000;
  t.is(await tm.get('ns', 'default', spec()), 'tok-2');
});

test('jitter refreshes up to 10 s early', async (t) => {
  const clock = { ms: T0 };
  const req = new FakeRequester(clock);
  const tm = new TokenManager({ requester: req, now: () => clock.ms, random: () => 0.99 });
  await tm.get('ns', 'default', spec());
  clock.ms = T0 + 2886_000 - 9_000 + 1;
  await tm.get('ns', 'default', spec());
  t.is(req.calls.length, 2);
});

test('a long-lived token is refreshed after 24 h (upstream maxTTL)', async (t) => {
  const { clock, req, tm } = setup();
  const week = 7 * 24 * 3600;
  await tm.get('ns', 'default', spec(week));
  clock.ms = T0 + MAX_TTL_MS;
  await tm.get('ns', 'default', spec(week));
  t.is(req.calls.length, 1);
  clock.ms = T0 + MAX_TTL_MS + 1;
  await tm.get('ns', 'default', spec(week));
  t.is(req.calls.length, 2);
});

test('the lifetime the server granted counts, not the one asked for', async (t) => {
  const { clock, req, tm } = setup(1000);
  await tm.get('ns', 'default', spec(7200));
  clock.ms = T0 + 800_001;
  await tm.get('ns', 'default', spec(7200));
  t.is(req.calls.length, 2);
});

test('when the server refuses, the cached token serves while valid; then the error surfaces', async (t) => {
  const { clock, req, tm } = setup();
  await tm.get('ns', 'default', spec());
  req.fail = new Error('connection refused');
  clock.ms = T0 + 3000_000;
  t.is(await tm.get('ns', 'default', spec()), 'tok-1');
  clock.ms = T0 + 3607_000;
  await t.throwsAsync(tm.get('ns', 'default', spec()), { message: 'connection refused' });
});

test('tokens are per pod, account, audiences and lifetime; forgetPod drops a pod\'s', async (t) => {
  const { req, tm } = setup();
  await tm.get('ns', 'default', spec());
  await tm.get('ns', 'default', spec(3607, 'u2'));
  await tm.get('ns', 'other', spec());
  await tm.get('ns', 'default', { ...spec(), audiences: ['vault'] });
  await tm.get('ns', 'default', spec(7200));
  t.is(req.calls.length, 5);
  t.is(tm.size, 5);
  tm.forgetPod('u1');
  t.is(tm.size, 1);
  await tm.get('ns', 'default', spec(3607, 'u2'));
  t.is(req.calls.length, 5);
});

test('ApiTokenRequester posts a pod-bound TokenRequest to serviceaccounts/{name}/token', async (t) => {
  const seen: unknown[] = [];
  const client = {
    create(r: unknown, obj: unknown, opts: unknown) {
      seen.push({ r, obj, opts });
      return Promise.resolve({ ...(obj as object), spec: { expirationSeconds: 3607 }, status: { token: 'jwt', expirationTimestamp: '2026-01-01T01:00:07Z' } });
    },
  } as unknown as ApiClient;
  const out = await new ApiTokenRequester(client, 5000).request('ns', 'default', { audiences: ['a'], expirationSeconds: 3607, pod: { name: 'p', uid: 'u' } });
  t.deepEqual(out, { token: 'jwt', expiresAt: Date.parse('2026-01-01T01:00:07Z'), expirationSeconds: 3607 });
  const call = seen[0] as { r: { resource: string }; obj: Record<string, any>; opts: Record<string, unknown> };
  t.is(call.r.resource, 'serviceaccounts');
  t.is(call.opts.subresource, 'token');
  t.is(call.opts.namespace, 'ns');
  t.is(call.obj.metadata.name, 'default');
  t.deepEqual(call.obj.spec, { audiences: ['a'], expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' } });

  const empty = { create: () => Promise.resolve({ metadata: {}, status: {} }) } as unknown as ApiClient;
  await t.throwsAsync(new ApiTokenRequester(empty).request('ns', 'default', { audiences: [], expirationSeconds: 600, pod: { name: 'p', uid: 'u' } }), { message: /without a token/ });
});
