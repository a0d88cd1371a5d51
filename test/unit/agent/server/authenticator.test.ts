import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { RequestAuthenticator, type PeerCert } from '../../../../agent/server/authenticator';
import type { TokenReviewer } from '../../../../agent/server/token-reviewer';
import type { UserInfo } from '../../../../agent/server/user-info';

const noCert: PeerCert = { presented: false, verified: false, cn: '', orgs: [] };

function req(headers: Record<string, string> = {}): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

class FakeTokens implements TokenReviewer {
  calls: string[] = [];
  constructor(private readonly users: Record<string, UserInfo>, private readonly fail = false) {}
  review(token: string): Promise<UserInfo | undefined> {
    this.calls.push(token);
    if (this.fail) return Promise.reject(new Error('connection refused'));
    return Promise.resolve(this.users[token]);
  }
}

const alice: UserInfo = { username: 'alice', groups: ['devs'] };

test('a verified client certificate authenticates as its CN with its organizations', async (t) => {
  const a = new RequestAuthenticator({ x509: true, anonymous: false, peer: () => ({ presented: true, verified: true, cn: 'svc-apiserver-kubelet-client', orgs: ['system:masters'] }) });
  const r = await a.authenticate(req());
  t.deepEqual(r, { ok: true, user: { username: 'svc-apiserver-kubelet-client', groups: ['system:masters', 'system:authenticated'] } });
});

test('an unverified client certificate is refused even with anonymous on and a valid token', async (t) => {
  const tokens = new FakeTokens({ good: alice });
  const a = new RequestAuthenticator({ x509: true, anonymous: true, tokens, peer: () => ({ presented: true, verified: false, cn: 'mallory', orgs: ['system:masters'] }) });
  const r = await a.authenticate(req({ authorization: 'Bearer good' }));
  t.false(r.ok);
  t.deepEqual(tokens.calls, []);
});

test('a bearer token is reviewed; a valid one gives the user plus system:authenticated', async (t) => {
  const tokens = new FakeTokens({ good: alice });
  const a = new RequestAuthenticator({ x509: true, anonymous: false, tokens, peer: () => noCert });
  t.deepEqual(await a.authenticate(req({ authorization: 'Bearer good' })), { ok: true, user: { username: 'alice', groups: ['devs', 'system:authenticated'] } });
  t.deepEqual(tokens.calls, ['good']);
});

test('a bad token is 401 even when anonymous access is enabled (anonymous stands in only for no credentials)', async (t) => {
  const a = new RequestAuthenticator({ x509: true, anonymous: true, tokens: new FakeTokens({}), peer: () => noCert });
  const r = await a.authenticate(req({ authorization: 'Bearer bad' }));
  t.false(r.ok);
  t.is(r.ok ? '' : r.reason, 'invalid bearer token');
});

test('a failing token review is a failed authentication', async (t) => {
  const a = new RequestAuthenticator({ x509: false, anonymous: true, tokens: new FakeTokens({}, true), peer: () => noCert });
  const r = await a.authenticate(req({ authorization: 'Bearer x' }));
  t.false(r.ok);
  t.regex(r.ok ? '' : r.reason, /connection refused/);
});

test('no credentials: anonymous when enabled, else refused', async (t) => {
  const on = new RequestAuthenticator({ x509: true, anonymous: true, peer: () => noCert });
  t.deepEqual(await on.authenticate(req()), { ok: true, user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } });
  const off = new RequestAuthenticator({ x509: true, anonymous: false, tokens: new FakeTokens({}), peer: () => noCert });
  const r = await off.authenticate(req());
  t.false(r.ok);
});

test('with webhook authentication disabled a token is ignored, and certificates without x509 are ignored', async (t) => {
  const a = new RequestAuthenticator({ x509: false, anonymous: false, peer: () => ({ presented: true, verified: true, cn: 'x', orgs: [] }) });
  t.false((await a.authenticate(req({ authorization: 'Bearer good' }))).ok);
});
