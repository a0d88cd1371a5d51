/**
 * Property-based tests (fast-check) of continue tokens: whatever a client sends back decodes to a
 * token this server could have issued or is a 400 "continue key is not valid" (never another
 * error, never a revision that would reach storage as a fraction or an unsafe integer), and a
 * token pages only the list it came from. Runs are bounded by count.
 */
import test from 'ava';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/api/errors';
import { handleList } from '../../../../apiserver/handlers/list';
import { decodeContinue, encodeContinue } from '../../../../apiserver/store/continue-token';
import { call } from '../handlers/fake-http';
import { admin, configMap, openStore } from './fixture';

const b64 = (s: string) => Buffer.from(s).toString('base64url');

/** Tokens from nowhere: random text, base64 of random JSON, and near-misses of the real shape. */
const hostileToken = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.base64String({ maxLength: 80 }),
  fc.jsonValue({ maxDepth: 3 }).map((j) => b64(JSON.stringify(j))),
  fc
    .record({
      v: fc.oneof(fc.constant('meta.svc.io/v1'), fc.string({ maxLength: 12 }), fc.constant(null)),
      rv: fc.oneof(fc.integer(), fc.double(), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String), fc.constant(Number.MAX_SAFE_INTEGER + 2), fc.constant(null)),
      start: fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom('', '/', '/core/configmaps/default/a', '/core/configmaps/default/../../secrets', '/core/secrets/default/a'), fc.integer()),
    })
    .map((j) => b64(JSON.stringify(j))),
);

test('decoding any token gives a token we could have issued or a 400 "continue key is not valid"', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(hostileToken, (token) => {
      try {
        const d = decodeContinue(token);
        return Number.isSafeInteger(d.revision) && d.revision > 0 && d.startAfter.startsWith('/') && !d.startAfter.split('/').slice(1).some((s) => s === '' || s === '.' || s === '..');
      } catch (err) {
        return err instanceof ApiError && err.code === 400 && err.message.startsWith('continue key is not valid');
      }
    }),
    { numRuns: 3000 },
  ),
  );
});

test('a token decodes to what was encoded', (t) => {
  const segment = fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }).filter((s) => !s.includes('/') && s !== '.' && s !== '..');
  fc.assert(
    fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.array(segment, { minLength: 1, maxLength: 4 }), (revision, segs) => {
      const tok = { revision, startAfter: `/${segs.join('/')}` };
      t.deepEqual(decodeContinue(encodeContinue(tok)), tok);
    }),
    { numRuns: 1000 },
  );
});

test('through the list handler a hostile token is 200, 400 or 410, never a server error; a foreign one never pages', async (t) => {
  const f = await openStore({ rvWaitMs: 1 });
  try {
    for (const ns of ['default', 'other']) {
      for (const name of ['a', 'b', 'c']) await f.store.create(f.type('configmaps'), ns, configMap(name), admin);
      await f.store.create(f.type('secrets'), ns, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }, admin);
    }
    const lists = ['/api/v1/namespaces/default/configmaps', '/api/v1/namespaces/other/configmaps', '/api/v1/configmaps', '/api/v1/namespaces/default/secrets'];
    await fc.assert(
      fc.asyncProperty(hostileToken, fc.constantFrom(...lists), async (token, list) => {
        const res = await call(f, handleList, 'GET', `${list}?limit=2&continue=${encodeURIComponent(token)}`);
        t.true([200, 400, 410].includes(res.statusCode), `${res.statusCode} ${res.text}`);
      }),
      { numRuns: 300 },
    );
    // Real tokens: from each list, used on each list; only the list itself or one containing it pages on.
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...lists), fc.constantFrom(...lists), fc.integer({ min: 1, max: 2 }), async (from, on, limit) => {
        const first = await call(f, handleList, 'GET', `${from}?limit=${limit}`);
        const token = first.body.metadata.continue as string | undefined;
        if (!token) return;
        const next = await call(f, handleList, 'GET', `${on}?limit=10&continue=${encodeURIComponent(token)}`);
        type Item = { metadata: { uid: string; namespace: string } };
        const last = (first.body.items as Item[]).at(-1)!.metadata;
        const onNamespace = /\/namespaces\/([^/]+)\//.exec(on)?.[1];
        // The token's key must lie in the list it is used on: same resource, and its namespace unless all are listed.
        const within = on.split('/').pop() === from.split('/').pop() && (onNamespace === undefined || onNamespace === last.namespace);
        t.is(next.statusCode, within ? 200 : 400, `${from} → ${on}: ${next.text}`);
        if (within) {
          const seen = new Set((first.body.items as Item[]).map((o) => o.metadata.uid));
          t.false((next.body.items as Item[]).some((o) => seen.has(o.metadata.uid)), 'the next page starts after the last item');
          if (onNamespace) t.true((next.body.items as Item[]).every((o) => o.metadata.namespace === onNamespace));
        }
      }),
      { numRuns: 40 },
    );
  } finally {
    await f.close();
  }
});
