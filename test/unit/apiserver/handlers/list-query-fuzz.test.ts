/**
 * Property-based tests (fast-check) of a list's query parameters: random limit, resourceVersion,
 * resourceVersionMatch, selectors and continue values either make a query and read plan or are a
 * 400 ApiError, and through the list handler never a server error. The one 5xx upstream answers
 * for parameters is 504 "Too large resource version" for a resourceVersion the store has not
 * reached yet; it is allowed only for that. Runs are bounded by count.
 */
import test from 'ava';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/api/errors';
import { listQuery, type ResourceRequest } from '../../../../apiserver/handlers/context';
import { handleList } from '../../../../apiserver/handlers/list';
import { planList } from '../../../../apiserver/store/read-plan';
import { admin, configMap, openStore } from '../store/fixture';
import { call } from './fake-http';

const text = fc.string({ unit: 'binary', maxLength: 30 });
const digits = fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String);

/** Mostly plausible values, so that one bad parameter does not hide how the others are handled. */
const params = fc.record(
  {
    limit: fc.oneof(
      { arbitrary: digits, weight: 3 },
      { arbitrary: fc.integer({ min: -3, max: 5 }).map(String), weight: 2 },
      { arbitrary: fc.constantFrom('', '+1', '-0', '1e3', ' 1', '1.0', '0x10', '9223372036854775807', '9223372036854775808'), weight: 2 },
      { arbitrary: text, weight: 1 },
    ),
    resourceVersion: fc.oneof(
      { arbitrary: fc.integer({ min: 0, max: 30 }).map(String), weight: 3 },
      { arbitrary: fc.constantFrom('', '0', '00', '9007199254740991', '9007199254740992'), weight: 2 },
      { arbitrary: digits, weight: 1 },
      { arbitrary: text, weight: 1 },
    ),
    resourceVersionMatch: fc.oneof({ arbitrary: fc.constantFrom('', 'Exact', 'NotOlderThan', 'exact'), weight: 4 }, { arbitrary: text, weight: 1 }),
    labelSelector: fc.oneof(
      { arbitrary: fc.constantFrom('', 'app=web', 'app in (web,db)', 'app notin ()', '!app', 'n>1'), weight: 4 },
      { arbitrary: fc.string({ unit: fc.constantFrom('a', 'i', 'n', '=', '!', '(', ')', ',', '<', '>', ' ', '1'), maxLength: 20 }), weight: 1 },
      { arbitrary: text, weight: 1 },
    ),
    fieldSelector: fc.oneof(
      { arbitrary: fc.constantFrom('', 'metadata.name=a', 'metadata.name!=a,metadata.namespace=default', 'metadata.name=a\\,b'), weight: 4 },
      { arbitrary: fc.constantFrom('spec.x=1', 'metadata.name=a=b'), weight: 1 },
      { arbitrary: text, weight: 1 },
    ),
    continue: fc.oneof(
      { arbitrary: fc.constant(''), weight: 4 },
      { arbitrary: text, weight: 1 },
      { arbitrary: fc.base64String({ maxLength: 40 }), weight: 1 },
      { arbitrary: fc.jsonValue({ maxDepth: 2 }).map((j) => Buffer.from(JSON.stringify(j)).toString('base64url')), weight: 1 },
    ),
  },
  { requiredKeys: [] },
);

const search = (p: Record<string, string>) => new URLSearchParams(p).toString();

test('listQuery and the read plan either accept the parameters or answer a 400; a limit is always a safe integer', async (t) => {
  const f = await openStore();
  try {
    const type = f.type('configmaps');
    t.notThrows(() =>
      fc.assert(
      fc.property(params, (p) => {
        const query = new URLSearchParams(p);
        try {
          const q = listQuery({ query, type } as unknown as ResourceRequest);
          if (q.limit !== undefined && !Number.isSafeInteger(q.limit)) return false;
          planList(q);
          return true;
        } catch (err) {
          return err instanceof ApiError && err.code === 400;
        }
      }),
      { numRuns: 3000 },
    ),
    );
  } finally {
    await f.close();
  }
});

test('the list handler answers random parameters with 200, 400 or 410, never a server error', async (t) => {
  const f = await openStore({ rvWaitMs: 1 });
  try {
    for (const name of ['a', 'b', 'c']) await f.store.create(f.type('configmaps'), 'default', configMap(name, { labels: { app: 'web' } }), admin);
    await fc.assert(
      fc.asyncProperty(params, async (p) => {
        const res = await call(f, handleList, 'GET', `/api/v1/namespaces/default/configmaps?${search(p)}`);
        if (res.statusCode === 504) {
          // Upstream's answer for a resourceVersion the store has not reached: only for a decimal beyond the current revision.
          const current = await f.storage.currentRevision();
          t.regex(res.body.message, /^Too large resource version/, search(p));
          t.true(/^\d+$/.test(p.resourceVersion ?? '') && Number(p.resourceVersion) > current, search(p));
          return;
        }
        t.true([200, 400, 410].includes(res.statusCode), `${res.statusCode} for ${search(p)}: ${res.text}`);
        t.is(res.body.kind, res.statusCode === 200 ? 'ConfigMapList' : 'Status');
      }),
      { numRuns: 300 },
    );
  } finally {
    await f.close();
  }
});
