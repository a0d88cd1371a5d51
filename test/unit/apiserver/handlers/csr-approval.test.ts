import test from 'ava';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { handleCsrApproval } from '../../../../apiserver/handlers/csr-approval';
import { CsrSigner } from '../../../../apiserver/controllers/csr-signer';
import { createCA } from '../../../../apiserver/pki/certs';
import type { ResourceRequest } from '../../../../apiserver/handlers/context';
import { parseRequestInfo } from '../../../../apiserver/server/request-info';
import { certificatePem, conditionTypes, createCsr, csrType, makeRequestPem, setConditions } from '../controllers/csr-fixture';
import { adminCtx, openFixture, type Fixture } from '../controllers/store-fixture';

interface Answer {
  status: number;
  body: KObject;
}

/** Calls the handler as the router would for METHOD .../certificatesigningrequests/<name>/approval. */
async function call(f: Fixture, method: string, name: string, body?: unknown): Promise<Answer> {
  const path = `/apis/certificates.svc.io/v1/certificatesigningrequests/${name}/approval`;
  const text = body === undefined ? '' : JSON.stringify(body);
  const req = Object.assign(Readable.from(text ? [Buffer.from(text)] : []), {
    method,
    url: path,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
  }) as unknown as IncomingMessage;
  let status = 0;
  let payload = '';
  const res = {
    headersSent: false,
    writeHead(s: number) {
      status = s;
      return this;
    },
    end(chunk?: string | Buffer) {
      payload = chunk ? chunk.toString() : '';
    },
  } as unknown as ServerResponse;
  const r: ResourceRequest = {
    req,
    res,
    info: parseRequestInfo(method, path, new URLSearchParams()),
    query: new URLSearchParams(),
    user: adminCtx.user,
    type: csrType(f),
    store: f.store,
    cache: f.cache,
    log: f.log,
    signal: f.signal,
    now: f.clock.now,
  };
  await handleCsrApproval(r);
  return { status, body: JSON.parse(payload) as KObject };
}

async function setup(t: { teardown(fn: () => Promise<void>): void }) {
  const f = await openFixture();
  t.teardown(() => f.close());
  const created = await createCsr(f, 'c1', { pem: await makeRequestPem({ subject: 'O=system:nodes, CN=system:node:n1' }) });
  return { f, created };
}

function withConditions(csr: KObject, conditions: unknown[], extra: Partial<KObject> = {}): KObject {
  return { ...csr, ...extra, status: { conditions } };
}

async function invalid(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an error');
}

test('PUT approval sets the Approved condition with timestamps and changes nothing else', async (t) => {
  const { f, created } = await setup(t);
  const sent = withConditions(created, [{ type: 'Approved', reason: 'AdminApproved', message: 'looks right' }], {
    spec: { ...(created.spec as object), signerName: 'example.com/other', username: 'mallory' },
    metadata: { ...created.metadata, labels: { sneaky: 'yes' } },
  });
  const { status, body } = await call(f, 'PUT', 'c1', sent);
  t.is(status, 200);
  const conds = (body.status as { conditions: Array<Record<string, string>> }).conditions;
  t.deepEqual(conds, [
    { type: 'Approved', status: 'True', reason: 'AdminApproved', message: 'looks right', lastUpdateTime: '2025-03-01T12:00:00Z', lastTransitionTime: '2025-03-01T12:00:00Z' },
  ]);
  const stored = await f.store.get(csrType(f), '', 'c1');
  t.deepEqual(stored.spec, created.spec);
  t.is(stored.metadata.labels, undefined);
  t.deepEqual(conditionTypes(stored), ['Approved']);
});

test('a CSR cannot be both approved and denied (422)', async (t) => {
  const { f, created } = await setup(t);
  const err = await invalid(call(f, 'PUT', 'c1', withConditions(created, [{ type: 'Approved', status: 'True' }, { type: 'Denied', status: 'True' }])));
  t.is(err.code, 422);
  t.regex(err.message, /Approved and Denied conditions are mutually exclusive/);
  t.deepEqual(conditionTypes(await f.store.get(csrType(f), '', 'c1')), []);
});

test('a denied CSR cannot later be approved: Denied may not be removed (422)', async (t) => {
  const { f, created } = await setup(t);
  await call(f, 'PUT', 'c1', withConditions(created, [{ type: 'Denied', status: 'True', reason: 'AdminDenied' }]));
  const unpinned = { ...created, metadata: { ...created.metadata, resourceVersion: undefined } };
  const err = await invalid(call(f, 'PUT', 'c1', withConditions(unpinned, [{ type: 'Approved', status: 'True' }])));
  t.is(err.code, 422);
  t.regex(err.message, /may not remove a condition of type "Denied"/);
  t.deepEqual(conditionTypes(await f.store.get(csrType(f), '', 'c1')), ['Denied']);
});

test('Approved with status False, a duplicate type or a missing type is rejected (422)', async (t) => {
  const { f, created } = await setup(t);
  for (const conditions of [[{ type: 'Approved', status: 'False' }], [{ type: 'Approved' }, { type: 'Approved' }], [{ status: 'True' }], [{ type: 'Custom', status: 'Maybe' }]]) {
    const err = await invalid(call(f, 'PUT', 'c1', withConditions(created, conditions)));
    t.is(err.code, 422, JSON.stringify(conditions));
  }
});

test('a stale resourceVersion in the body is a conflict (409)', async (t) => {
  const { f, created } = await setup(t);
  await setConditions(f, 'c1', [{ type: 'Custom', status: 'True' }]);
  const err = await invalid(call(f, 'PUT', 'c1', withConditions(created, [{ type: 'Approved', status: 'True' }])));
  t.is(err.code, 409);
});

test('re-approving keeps lastTransitionTime and the issued certificate', async (t) => {
  const { f, created } = await setup(t);
  await call(f, 'PUT', 'c1', withConditions(created, [{ type: 'Approved', status: 'True' }]));
  await new CsrSigner(f.store, f.cache, f.registry, { ca: await createCA('test-ca', f.clock.now()), now: f.clock.now, log: f.log }).sync('c1');
  f.clock.advance(60_000);
  const current = await f.store.get(csrType(f), '', 'c1');
  t.truthy(certificatePem(current));
  const { body } = await call(f, 'PUT', 'c1', withConditions({ ...current, metadata: { ...current.metadata, resourceVersion: undefined } }, [{ type: 'Approved', status: 'True', reason: 'Again' }]));
  const c = (body.status as { conditions: Array<Record<string, string>> }).conditions[0];
  t.is(c.reason, 'Again');
  t.is(c.lastTransitionTime, '2025-03-01T12:00:00Z');
  t.is(c.lastUpdateTime, '2025-03-01T12:01:00Z');
  t.is(certificatePem(body), certificatePem(current));
});

test('GET returns the CSR; PATCH is not allowed', async (t) => {
  const { f } = await setup(t);
  const { status, body } = await call(f, 'GET', 'c1');
  t.is(status, 200);
  t.is(body.metadata.name, 'c1');
  const err = await invalid(call(f, 'PATCH', 'c1', {}));
  t.is(err.code, 405);
});

test('a body naming another object is a bad request', async (t) => {
  const { f, created } = await setup(t);
  const err = await invalid(call(f, 'PUT', 'c1', withConditions({ ...created, metadata: { ...created.metadata, name: 'c2' } }, [])));
  t.is(err.code, 400);
});
