/**
 * Adversarial probe, query parameters and numbers (issue 16, defect 7), against a real
 * svc-apiserver: a limit beyond int64, resourceVersions and grace periods no revision or deadline
 * can hold, integer fields beyond their Go type or beyond what we store exactly, label and field
 * selectors upstream refuses, and hostile continue tokens. Each answer is a 4xx Status naming the
 * problem, never a 5xx a client would retry. Every test is bounded by a fixed count of requests
 * and a timeout.
 */
import test from 'ava';
import fc from 'fast-check';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

let s: RunningApiServer;
const NS = 'adv-query';
const CMS = () => `${s.url}/api/v1/namespaces/${NS}/configmaps`;

test.before(async () => {
  s = await startApiServer();
  for (const ns of [NS, `${NS}-other`]) {
    const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces`, { metadata: { name: ns } });
    if (r.status !== 201) throw new Error(`namespace ${ns}: ${r.status} ${r.text}`);
  }
  // Pods need the namespace's default service account, which a control loop creates.
  for (let i = 0; (await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/${NS}/serviceaccounts/default`)).status !== 200; i++) {
    if (i >= 100) throw new Error('the default service account did not appear');
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const [name, labels] of [
    ['a', { app: 'web', n: '5' }],
    ['b', { app: 'db', n: '12' }],
    ['c', { app: '' }],
    ['d', {}],
  ] as const) {
    const r = await call(s.admin, 'POST', CMS(), { metadata: { name, labels } });
    if (r.status !== 201) throw new Error(`configmap ${name}: ${r.status} ${r.text}`);
  }
});
test.after.always(async () => {
  await s?.stop();
});

/** The configmaps a list answered, without the root CA ConfigMap the control plane publishes into every namespace. */
const names = (body: { items: Array<{ metadata: { name: string } }> }) => body.items.map((o) => o.metadata.name).filter((n) => n !== 'kube-root-ca.crt');

test('a limit beyond int64 is 400, not the 503 clients retry; a huge valid limit lists everything', async (t) => {
  t.timeout(30_000);
  for (const limit of ['99999999999999999999', '9223372036854775808', '-9223372036854775809']) {
    for (const list of [CMS(), `${s.url}/api/v1/configmaps`]) {
      const r = await call(s.admin, 'GET', `${list}?limit=${limit}`);
      t.is(r.status, 400, `${list} limit=${limit}: ${r.text}`);
      t.like(r.body, { kind: 'Status', reason: 'BadRequest', code: 400 });
      t.regex(r.body.message, /^invalid limit ".*": value out of range/);
    }
  }
  const all = await call(s.admin, 'GET', `${CMS()}?limit=9223372036854775807`);
  t.is(all.status, 200, all.text);
  t.deepEqual(names(all.body), ['a', 'b', 'c', 'd']);
  t.is(all.body.metadata.continue, undefined);
});

test('resourceVersions no revision can be are 400 on list and get', async (t) => {
  t.timeout(30_000);
  for (const rv of ['99999999999999999999', '9007199254740993', '-1', 'abc', '1e3']) {
    const list = await call(s.admin, 'GET', `${CMS()}?resourceVersion=${encodeURIComponent(rv)}&resourceVersionMatch=NotOlderThan`);
    t.is(list.status, 400, `list rv=${rv}: ${list.text}`);
    t.regex(list.body.message, /^invalid resource version/);
    const get = await call(s.admin, 'GET', `${CMS()}/a?resourceVersion=${encodeURIComponent(rv)}`);
    t.is(get.status, 400, `get rv=${rv}: ${get.text}`);
  }
});

test('int64 and int32 fields refuse what their type cannot hold or we cannot store exactly: 422 naming the field', async (t) => {
  t.timeout(30_000);
  const pods = `${s.url}/api/v1/namespaces/${NS}/pods`;
  const pod = (name: string, spec: string, container = '') =>
    `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${name}"},"spec":{${spec}"schedulerName":"none","containers":[{"name":"c","image":"busybox"${container}}]}}`;
  const cases: Array<[string, string, string]> = [
    ['beyond int64', pod('p1', '"terminationGracePeriodSeconds":9223372036854775808,'), 'spec.terminationGracePeriodSeconds'],
    ['not exactly representable', pod('p2', '"activeDeadlineSeconds":9007199254740993,'), 'spec.activeDeadlineSeconds'],
    ['an exponent beyond int64', pod('p3', '"priority":1e300,'), 'spec.priority'],
    ['beyond int32', pod('p4', '', ',"ports":[{"containerPort":2147483648}]'), 'spec.containers[0].ports[0].containerPort'],
    ['a fraction', pod('p5', '"terminationGracePeriodSeconds":1.5,'), 'spec.terminationGracePeriodSeconds'],
  ];
  for (const [what, body, field] of cases) {
    const r = await call(s.admin, 'POST', pods, body);
    t.is(r.status, 422, `${what}: ${r.text}`);
    t.like(r.body, { kind: 'Status', reason: 'Invalid', code: 422 });
    t.true(
      (r.body.details.causes as Array<{ field: string }>).some((c) => c.field === field),
      `${what}: ${field} among ${JSON.stringify(r.body.details.causes)}`,
    );
  }
  // A patch cannot sneak one in either, and the stored object is unchanged.
  const ok = await call(s.admin, 'POST', pods, pod('p6', '"terminationGracePeriodSeconds":9007199254740991,'));
  t.is(ok.status, 201, ok.text);
  t.is(ok.body.spec.terminationGracePeriodSeconds, 9007199254740991);
  const patched = await call(s.admin, 'PATCH', `${pods}/p6`, '{"spec":{"activeDeadlineSeconds":100000000000000000000}}', { 'content-type': 'application/merge-patch+json' });
  t.is(patched.status, 422, patched.text);
  t.is(patched.body.details.causes[0].field, 'spec.activeDeadlineSeconds');
  const after = await call(s.admin, 'GET', `${pods}/p6`);
  t.is(after.body.metadata.resourceVersion, ok.body.metadata.resourceVersion);
  const lease = await call(s.admin, 'POST', `${s.url}/apis/coordination.svc.io/v1/namespaces/${NS}/leases`, '{"metadata":{"name":"l"},"spec":{"leaseDurationSeconds":4294967296}}');
  t.is(lease.status, 422, lease.text);
  t.is(lease.body.details.causes[0].field, 'spec.leaseDurationSeconds');
});

test('gracePeriodSeconds beyond int64 or any deadline is 400', async (t) => {
  t.timeout(30_000);
  for (const grace of ['99999999999999999999', '9223372036854775807', '1e3']) {
    const r = await call(s.admin, 'DELETE', `${CMS()}/a?gracePeriodSeconds=${grace}`);
    t.is(r.status, 400, `${grace}: ${r.text}`);
    t.regex(r.body.message, /^gracePeriodSeconds: Invalid value/);
  }
  const body = await call(s.admin, 'DELETE', `${CMS()}/a`, '{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":1e20}');
  t.is(body.status, 400, body.text);
  t.is((await call(s.admin, 'GET', `${CMS()}/a`)).status, 200, 'nothing was deleted');
});

test('label selectors: upstream meanings where upstream accepts, 400 where it refuses', async (t) => {
  t.timeout(30_000);
  const list = async (sel: string) => call(s.admin, 'GET', `${CMS()}?labelSelector=${encodeURIComponent(sel)}`);
  // "()" is the set holding the empty value (apimachinery's parseValues), so this keeps all but app="".
  const notin = await list('app notin ()');
  t.is(notin.status, 200, notin.text);
  t.deepEqual(names(notin.body), ['a', 'b', 'd']);
  t.deepEqual(names((await list('app in ()')).body), ['c']);
  t.deepEqual(names((await list('n>9')).body), ['b'], 'integer comparison');
  t.deepEqual(names((await list('app in (web,)')).body), ['a', 'c']);
  for (const sel of ['!app=web', 'app in (web', 'app in (web,,)', 'a..b/c', 'app=-x', 'n>x', 'a b']) {
    const r = await list(sel);
    t.is(r.status, 400, `${sel}: ${r.text}`);
    t.regex(r.body.message, /^labelSelector: Invalid value: /);
  }
  for (const sel of ['metadata.name=a=b', 'metadata.name=a\\x', 'metadata.name =a', 'spec.x=1']) {
    const r = await call(s.admin, 'GET', `${CMS()}?fieldSelector=${encodeURIComponent(sel)}`);
    t.is(r.status, 400, `${sel}: ${r.text}`);
  }
});

test('hostile continue tokens are 400 "continue key is not valid"; a token pages only its own list', async (t) => {
  t.timeout(60_000);
  const first = await call(s.admin, 'GET', `${CMS()}?limit=1`);
  const token = first.body.metadata.continue as string;
  t.truthy(token);
  const rev = Number(first.body.metadata.resourceVersion);
  const forge = (body: unknown) => Buffer.from(JSON.stringify(body)).toString('base64url');
  const start = `/core/configmaps/${NS}/a`;
  const hostile: Array<[string, string]> = [
    ['garbage', 'garbage'],
    ['a fractional revision', forge({ v: 'meta.svc.io/v1', rv: rev + 0.5, start })],
    ['a revision beyond 2^53', forge({ v: 'meta.svc.io/v1', rv: 1e300, start })],
    ['a future revision', forge({ v: 'meta.svc.io/v1', rv: rev + 100000, start })],
    ['a negative revision', forge({ v: 'meta.svc.io/v1', rv: -1, start })],
    ['an empty key', forge({ v: 'meta.svc.io/v1', rv: rev, start: '' })],
    ['a key climbing out', forge({ v: 'meta.svc.io/v1', rv: rev, start: `/core/configmaps/${NS}/../../secrets/${NS}/x` })],
    ['a key of another resource', forge({ v: 'meta.svc.io/v1', rv: rev, start: `/core/secrets/${NS}/x` })],
  ];
  for (const [what, tok] of hostile) {
    const r = await call(s.admin, 'GET', `${CMS()}?limit=1&continue=${encodeURIComponent(tok)}`);
    t.is(r.status, 400, `${what}: ${r.text}`);
    t.regex(r.body.message, /^continue key is not valid/, what);
  }
  const foreign = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/${NS}-other/configmaps?limit=1&continue=${encodeURIComponent(token)}`);
  t.is(foreign.status, 400, foreign.text);
  const own = await call(s.admin, 'GET', `${CMS()}?limit=10&continue=${encodeURIComponent(token)}`);
  t.is(own.status, 200, own.text);
  // A fixed sample of random tokens (seeded, so the run is the same each time): never a server error.
  const random = fc.sample(fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.jsonValue({ maxDepth: 2 }).map(forge)), { numRuns: 40, seed: 16 });
  for (const tok of random) {
    const r = await call(s.admin, 'GET', `${CMS()}?limit=1&continue=${encodeURIComponent(tok)}`);
    t.true(r.status === 400 || r.status === 200, `${JSON.stringify(tok)}: ${r.status} ${r.text}`);
  }
});
