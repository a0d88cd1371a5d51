/**
 * ListFromCacheSnapshot against real svc-apiservers (issue 23 item 6; upstream KEP-4988): with the
 * gate on, a list at an exact older resourceVersion and the pages of a chunked list return the
 * state of their revision after later writes, answered from the watch cache's snapshots
 * (apiserver_cache_list_total counts them); with the gate at its default (off, alpha as upstream
 * 1.33) the same reads come from the store and nothing is counted.
 */
import test from 'ava';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

let on: RunningApiServer;
let off: RunningApiServer;
test.before(async () => {
  [on, off] = await Promise.all([startApiServer({ args: ['--feature-gates=ListFromCacheSnapshot=true'] }), startApiServer()]);
});
test.after.always(async () => {
  await Promise.all([on?.stop(), off?.stop()]);
});

/** Lists answered from the snapshots for ConfigMaps so far (0 when the series does not exist). */
async function servedFromCache(s: RunningApiServer): Promise<number> {
  const text = (await call(s.admin, 'GET', `${s.url}/metrics`)).text;
  const m = /^apiserver_cache_list_total\{[^}]*resource_prefix="\/core\/configmaps"[^}]*\} (\d+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

/** Creates namespace ns with ConfigMaps c0..c(n-1) (and its kube-root-ca.crt); returns the list's resourceVersion after. */
async function seed(s: RunningApiServer, ns: string, n: number): Promise<string> {
  t0(await call(s.admin, 'POST', `${s.url}/api/v1/namespaces`, { metadata: { name: ns } }), 201);
  // The root CA publisher adds kube-root-ca.crt to every namespace: wait for it, so that every state listed has it.
  for (let i = 0; i < 200; i++) {
    if ((await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`)).status === 200) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  for (let i = 0; i < n; i++) {
    t0(await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `c${i}` }, data: { v: 'old' } }), 201);
  }
  const list = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/${ns}/configmaps`);
  return list.body.metadata.resourceVersion as string;
}

function t0(r: { status: number; text: string }, want: number): void {
  if (r.status !== want) throw new Error(`HTTP ${r.status}, want ${want}: ${r.text}`);
}

/** Changes c0, deletes c1, adds c9; then waits (a not-older-than list) until the server's watch cache has seen every write. */
async function rewrite(s: RunningApiServer, ns: string): Promise<void> {
  const base = `${s.url}/api/v1/namespaces/${ns}/configmaps`;
  t0(await call(s.admin, 'PATCH', `${base}/c0`, { data: { v: 'new' } }, { 'content-type': 'application/merge-patch+json' }), 200);
  t0(await call(s.admin, 'DELETE', `${base}/c1`), 200);
  const created = await call(s.admin, 'POST', base, { metadata: { name: 'c9' }, data: { v: 'new' } });
  t0(created, 201);
  const rv = created.body.metadata.resourceVersion as string;
  t0(await call(s.admin, 'GET', `${base}?resourceVersion=${rv}&resourceVersionMatch=NotOlderThan&limit=1`), 200);
}

const names = (list: { items: Array<{ metadata: { name: string } }> }) => list.items.map((o) => o.metadata.name);

for (const [gate, server, counted] of [
  ['on', () => on, true],
  ['off (default)', () => off, false],
] as const) {
  test(`gate ${gate}: resourceVersionMatch=Exact at an older revision returns that revision's state after later writes`, async (t) => {
    const s = server();
    const ns = 'exact';
    const rv = await seed(s, ns, 4);
    await rewrite(s, ns);
    const before = await servedFromCache(s);
    const r = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/${ns}/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    t.is(r.status, 200, r.text);
    t.is(r.body.metadata.resourceVersion, rv);
    t.deepEqual(names(r.body), ['c0', 'c1', 'c2', 'c3', 'kube-root-ca.crt']);
    t.deepEqual(
      r.body.items.slice(0, 4).map((o: { data: { v: string } }) => o.data.v),
      ['old', 'old', 'old', 'old'],
    );
    // The latest state, for contrast (a consistent read: always the store).
    const now = await call(s.admin, 'GET', `${s.url}/api/v1/namespaces/${ns}/configmaps`);
    t.deepEqual(names(now.body), ['c0', 'c2', 'c3', 'c9', 'kube-root-ca.crt']);
    // At least: the in-process loops may list ConfigMaps too.
    if (counted) t.true((await servedFromCache(s)) >= before + 1);
    else t.is(await servedFromCache(s), 0);
  });

  test(`gate ${gate}: the pages of a chunked list stay at its revision across writes between pages`, async (t) => {
    const s = server();
    const ns = 'pages';
    await seed(s, ns, 5);
    const base = `${s.url}/api/v1/namespaces/${ns}/configmaps`;
    const first = await call(s.admin, 'GET', `${base}?limit=2`);
    t.is(first.status, 200, first.text);
    const rv = first.body.metadata.resourceVersion as string;
    t.is(first.body.metadata.remainingItemCount, 4);
    await rewrite(s, ns);
    const before = await servedFromCache(s);
    const seen = [...names(first.body)];
    let token = first.body.metadata.continue as string | undefined;
    let pages = 0;
    while (token && pages < 10) {
      const page = await call(s.admin, 'GET', `${base}?limit=2&continue=${encodeURIComponent(token)}`);
      t.is(page.status, 200, page.text);
      t.is(page.body.metadata.resourceVersion, rv);
      for (const o of page.body.items as Array<{ metadata: { name: string }; data: { v: string } }>) if (o.metadata.name.startsWith('c')) t.is(o.data.v, 'old');
      seen.push(...names(page.body));
      token = page.body.metadata.continue;
      pages++;
    }
    t.deepEqual(seen, ['c0', 'c1', 'c2', 'c3', 'c4', 'kube-root-ca.crt']);
    t.is(pages, 2);
    if (counted) t.true((await servedFromCache(s)) >= before + pages);
    else t.is(await servedFromCache(s), 0);
  });
}
