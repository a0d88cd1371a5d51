import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { bearerToken } from '../../../../apiserver/authn/authenticator';

const withAuth = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;

test('bearerToken reads the token after the Bearer scheme in any case, trimmed', (t) => {
  t.is(bearerToken(withAuth('Bearer abc.def')), 'abc.def');
  t.is(bearerToken(withAuth('bearer abc')), 'abc');
  t.is(bearerToken(withAuth('BEARER \t abc  ')), 'abc');
  t.is(bearerToken(withAuth('  Bearer abc')), 'abc');
  t.is(bearerToken(withAuth('Bearer\tx')), 'x');
});

test('bearerToken answers undefined for other schemes, a missing token and no header', (t) => {
  t.is(bearerToken(withAuth()), undefined);
  t.is(bearerToken(withAuth('')), undefined);
  t.is(bearerToken(withAuth('Bearer')), undefined);
  t.is(bearerToken(withAuth('Bearer    ')), undefined);
  t.is(bearerToken(withAuth('Basic dXNlcjpwYXNz')), undefined);
  t.is(bearerToken(withAuth('Bearerabc')), undefined);
  t.is(bearerToken(withAuth('Bearer-x abc')), undefined);
});
