/** nft script text: the full replacement, the incremental difference, the removal. */
import test from 'ava';
import fc from 'fast-check';
import type { KObject } from '../../../../apiserver/api/types';
import type { NftTable } from '../../../../agent/proxy/nft-model';
import { renderDelete, renderDiff, renderFull } from '../../../../agent/proxy/nft-render';
import { FragmentCache, buildTable } from '../../../../agent/proxy/nft-rules';
import { PortsMemo, servicePortsOf } from '../../../../agent/proxy/service-ports';
import { service, slice, web, webPorts } from './fixtures';

const build = (services: KObject[], slices: KObject[], cache?: FragmentCache, memo?: PortsMemo): NftTable => buildTable('ip', servicePortsOf(services, slices, 'n1', memo), { clusterCIDRs: [], masqueradeAll: false }, cache);
const lines = (s: string) => s.trimEnd().split('\n');
const webWith = (...ips: string[]) => build([web()], [slice('web-a', 'web', ips.map((ip) => ({ ip })), webPorts)]);

test('full: the table is added, deleted and declared again in one script; chains, then sets, then elements, then rules', (t) => {
  const l = lines(renderFull(webWith('10.244.0.5')));
  t.deepEqual(l.slice(0, 3), ['add table ip svc-proxy', 'delete table ip svc-proxy', 'add table ip svc-proxy']);
  t.true(l.includes('add chain ip svc-proxy nat-output { type nat hook output priority -100 ; }'));
  const firstOf = (prefix: string) => l.findIndex((x) => x.startsWith(prefix));
  const lastOf = (prefix: string) => l.length - 1 - [...l].reverse().findIndex((x) => x.startsWith(prefix));
  t.true(lastOf('add chain') < firstOf('add set'));
  t.true(lastOf('add map') < firstOf('add element'));
  t.true(lastOf('add element') < firstOf('add rule'));
  t.true(l.some((x) => /^add element ip svc-proxy service-ips \{ 10\.96\.0\.10 \. tcp \. 80 : goto service-[A-Z2-7]{8}-default\/web\/tcp\/http \}$/.test(x)));
  t.true(l.includes('add rule ip svc-proxy cluster-ips-check ip daddr @cluster-ips reject'));
});

test('removal: add then delete, so an absent table is not an error', (t) => {
  t.is(renderDelete('ip6'), 'add table ip6 svc-proxy\ndelete table ip6 svc-proxy\n');
});

test('no change: an empty difference', (t) => {
  t.is(renderDiff(webWith('10.244.0.5'), webWith('10.244.0.5')), '');
});

test('an endpoint added: the service chain flushed and refilled, its hairpin element added; nothing else touched', (t) => {
  const l = lines(renderDiff(webWith('10.244.0.5'), webWith('10.244.0.5', '10.244.0.6'))!);
  t.regex(l[0], /^flush chain ip svc-proxy service-[A-Z2-7]{8}-default\/web\/tcp\/http$/);
  t.is(l[1], 'add element ip svc-proxy hairpin { 10.244.0.6 . 10.244.0.6 }');
  t.is(l.filter((x) => x.startsWith('add rule')).length, 2, 'one DNAT rule per endpoint in the service chain');
  t.false(l.some((x) => x.startsWith('delete') || x.startsWith('add chain')));
  t.is(l.length, 4);
});

test('an endpoint removed: its DNAT rule and hairpin element go; no chain is deleted', (t) => {
  const l = lines(renderDiff(webWith('10.244.0.5', '10.244.0.6'), webWith('10.244.0.5'))!);
  t.deepEqual(l.slice(1), ['delete element ip svc-proxy hairpin { 10.244.0.6 . 10.244.0.6 }', `add rule ${l[0].slice('flush chain '.length)} meta l4proto tcp dnat to 10.244.0.5:8080`]);
  t.false(l.some((x) => x.includes('delete chain')));
});

test('an endpoint removed with affinity: the service chain refilled first, the endpoint chain flushed and deleted last', (t) => {
  const sticky = (...ips: string[]) => build([web({ sessionAffinity: 'ClientIP' })], [slice('web-a', 'web', ips.map((ip) => ({ ip })), webPorts)]);
  const l = lines(renderDiff(sticky('10.244.0.5', '10.244.0.6'), sticky('10.244.0.5'))!);
  const del = l.findIndex((x) => x.startsWith('delete chain ip svc-proxy endpoint-'));
  t.true(del > 0 && l.slice(del).every((x) => x.startsWith('delete chain') || x.startsWith('delete set')), l.join('\n'));
  t.regex(l.at(-1)!, /^delete set ip svc-proxy affinity-/, 'the affinity set after the chain that updates it');
  t.true(l.findIndex((x) => x.startsWith('flush chain ip svc-proxy endpoint-')) < del);
  t.true(l.findIndex((x) => x.startsWith('add rule ip svc-proxy service-')) < del);
});

test('the last endpoint gone: the map element moves from service-ips to no-endpoint-services before the chains are deleted', (t) => {
  const l = lines(renderDiff(webWith('10.244.0.5'), webWith())!);
  const delEl = l.indexOf('delete element ip svc-proxy service-ips { 10.96.0.10 . tcp . 80 }');
  const addEl = l.indexOf('add element ip svc-proxy no-endpoint-services { 10.96.0.10 . tcp . 80 : goto reject-chain }');
  const delChain = l.findIndex((x) => x.startsWith('delete chain ip svc-proxy service-'));
  t.true(delEl >= 0 && addEl > delEl && delChain > addEl, l.join('\n'));
});

test('a changed map value is deleted and added again', (t) => {
  const a = build([web({ internalTrafficPolicy: 'Local' })], [slice('web-a', 'web', [{ ip: '10.244.0.5', node: 'n2' }, { ip: '10.244.0.6', node: 'n1' }], webPorts)]);
  const b = build([web()], [slice('web-a', 'web', [{ ip: '10.244.0.5', node: 'n2' }, { ip: '10.244.0.6', node: 'n1' }], webPorts)]);
  const l = lines(renderDiff(a, b)!);
  t.true(l.includes('delete element ip svc-proxy service-ips { 10.96.0.10 . tcp . 80 }'));
  t.true(l.some((x) => x.startsWith('add element ip svc-proxy service-ips { 10.96.0.10 . tcp . 80 : goto service-')));
});

test('dynamic sets keep their elements; a changed set declaration (the affinity timeout) needs a full sync', (t) => {
  const aff = (timeout: number) => build([web({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: timeout } } })], [slice('web-a', 'web', [{ ip: '10.244.0.5' }], webPorts)]);
  const a = aff(60);
  const withClient = aff(60);
  for (const s of withClient.sets.values()) if (s.dynamic) s.elements.set('192.0.2.1', '');
  t.is(renderDiff(a, withClient), '', 'kernel-filled elements are never diffed');
  t.is(renderDiff(a, aff(120)), undefined);
});

test('a base chain whose hook changed needs a full sync', (t) => {
  const a = webWith('10.244.0.5');
  const b = webWith('10.244.0.5');
  b.chains.get('nat-output')!.base = 'type nat hook output priority -99 ;';
  t.is(renderDiff(a, b), undefined);
});

/** Random Services (0-3 ports) with random ready endpoints. */
const world = fc.array(
  fc.record({ n: fc.integer({ min: 0, max: 5 }), eps: fc.uniqueArray(fc.integer({ min: 1, max: 20 }), { maxLength: 4 }), udp: fc.boolean(), np: fc.boolean() }),
  { maxLength: 6 },
);
/** Interns objects by their JSON, as an informer keeps an unchanged object: same content, same object. */
function interner(): (o: KObject) => KObject {
  const seen = new Map<string, KObject>();
  return (o) => {
    const k = JSON.stringify(o);
    const had = seen.get(k);
    if (had) return had;
    seen.set(k, o);
    return o;
  };
}

function tableOf(w: { n: number; eps: number[]; udp: boolean; np: boolean }[], cache?: FragmentCache, memo?: PortsMemo, intern: (o: KObject) => KObject = (o) => o): NftTable {
  const seen = new Set<number>();
  const svcs: KObject[] = [];
  const slices: KObject[] = [];
  for (const s of w) {
    if (seen.has(s.n)) continue;
    seen.add(s.n);
    svcs.push(intern(service(`s${s.n}`, { type: s.np ? 'NodePort' : 'ClusterIP', clusterIP: `10.96.0.${s.n + 1}`, ports: [{ port: 80, protocol: s.udp ? 'UDP' : 'TCP', nodePort: 30000 + s.n }] })));
    slices.push(intern(slice(`s${s.n}-a`, `s${s.n}`, s.eps.map((e) => ({ ip: `10.244.0.${e}` })), [{ port: 8080, protocol: s.udp ? 'UDP' : 'TCP' }])));
  }
  return build(svcs, slices, cache, memo);
}

test('property: the difference adds exactly the new chains and deletes exactly the stale ones, deleting only after every add', (t) => {
  t.notThrows(() =>
    fc.assert(
    fc.property(world, world, (wa, wb) => {
      const a = tableOf(wa);
      const b = tableOf(wb);
      const diff = renderDiff(a, b);
      if (diff === undefined) return false;
      const l = diff === '' ? [] : lines(diff);
      const added = l.filter((x) => x.startsWith('add chain ')).map((x) => x.split(' ')[4]);
      const deleted = l.filter((x) => x.startsWith('delete chain ')).map((x) => x.split(' ')[4]);
      const expectAdded = [...b.chains.keys()].filter((n) => !a.chains.has(n));
      const expectDeleted = [...a.chains.keys()].filter((n) => !b.chains.has(n));
      const firstDelete = l.findIndex((x) => x.startsWith('delete chain') || x.startsWith('delete set'));
      const lastAdd = l.reduce((last, x, i) => (x.startsWith('add ') ? i : last), -1);
      return JSON.stringify(added) === JSON.stringify(expectAdded) && JSON.stringify(deleted) === JSON.stringify(expectDeleted) && (firstDelete < 0 || firstDelete > lastAdd) && (diff === '') === (JSON.stringify(renderFull(a)) === JSON.stringify(renderFull(b)));
    }),
    { numRuns: 200 },
    ),
  );
});

test('property: successive builds through the fragment cache equal builds without it', (t) => {
  t.notThrows(() =>
    fc.assert(
      fc.property(fc.array(world, { minLength: 1, maxLength: 5 }), (worlds) => {
        const cache = new FragmentCache();
        const memo = new PortsMemo();
        const intern = interner();
        return worlds.every((w) => renderFull(tableOf(w, cache, memo, intern)) === renderFull(tableOf(w)));
      }),
      { numRuns: 150 },
    ),
  );
});

test('an unchanged Service port keeps its chain objects from one cached build to the next; a changed one gets new ones', (t) => {
  const cache = new FragmentCache();
  const memo = new PortsMemo();
  // The informer's objects: an unchanged Service and slice are the same objects from one sync to the next.
  const svcB = service('b', { clusterIP: '10.96.0.2', ports: [{ port: 53 }] });
  const sliceB = slice('b-a', 'b', [{ ip: '10.244.9.9' }], [{ port: 53 }]);
  const svcWeb = web();
  const twoServices = (ip: string) => build([svcWeb, svcB], [slice('web-a', 'web', [{ ip }], webPorts), sliceB], cache, memo);
  const a = twoServices('10.244.0.5');
  const b = twoServices('10.244.0.6');
  const chainOf = (tb: NftTable, part: string) => [...tb.chains.entries()].find(([n]) => n.startsWith('service-') && n.includes(part))![1];
  t.is(chainOf(a, 'default/b/'), chainOf(b, 'default/b/'));
  t.not(chainOf(a, 'default/web/'), chainOf(b, 'default/web/'));
  t.is(renderDiff(a, b), renderDiff(webWith('10.244.0.5'), webWith('10.244.0.6')));
});
