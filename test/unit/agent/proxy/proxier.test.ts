/** The proxy's loop: informers, minimum sync interval, full and incremental syncs, retries, cleanup, health, conntrack. */
import test from 'ava';
import { HEALTH_TIMEOUT_MS, Proxier, endpointSlicesResource, servicesResource, type RuleWriter } from '../../../../agent/proxy/proxier';
import { NftWriter } from '../../../../agent/proxy/nft-writer';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { MemLog } from '../node/fakes/mem-log';
import { FakeClock, flush } from '../../../helpers/fake-clock';
import { RecordingNft, service, slice, web, webPorts } from './fixtures';

const isFull = (s: string) => s.startsWith('add table ip svc-proxy\ndelete table ip svc-proxy\nadd table ip svc-proxy\n');

function setup(o: { minSyncPeriodMs?: number } = {}) {
  const api = new FakeApiClient();
  const clock = new FakeClock();
  const nft = new RecordingNft();
  const flows: string[][] = [];
  const synced: { seconds: number; full: boolean; atMs: number }[] = [];
  const log = new MemLog();
  let tick = 0;
  const proxier = new Proxier({
    client: api,
    nodeName: 'n1',
    clock,
    log,
    writer: new NftWriter(nft, ['ip'], { clusterCIDRs: [], masqueradeAll: false }),
    conntrack: { deleteFlows: (args) => Promise.resolve(void flows.push([...args])) },
    minSyncPeriodMs: o.minSyncPeriodMs ?? 1000,
    observer: { synced: (seconds, full, atMs) => void synced.push({ seconds, full, atMs }) },
    elapsed: () => (tick += 0.25),
  });
  const ac = new AbortController();
  return { api, clock, nft, flows, synced, log, proxier, ac, run: () => proxier.run(ac.signal) };
}

test('after both lists, one full sync of what they hold; the observer gets its duration and time', async (t) => {
  const s = setup();
  s.api.seed(servicesResource, web());
  s.api.seed(endpointSlicesResource, slice('web-a', 'web', [{ ip: '10.244.0.5' }], webPorts));
  const done = s.run();
  await s.clock.advanceUntil(() => s.nft.scripts.length > 0, 5000);
  t.is(s.nft.scripts.length, 1);
  t.true(isFull(s.nft.scripts[0]));
  t.regex(s.nft.scripts[0], /add element ip svc-proxy service-ips \{ 10\.96\.0\.10 \. tcp \. 80 : goto service-/);
  t.regex(s.nft.scripts[0], /dnat to 10\.244\.0\.5:8080/);
  t.is(s.synced.length, 1);
  t.like(s.synced[0], { seconds: 0.25, full: true });
  t.true(s.synced[0].atMs <= s.clock.now() && s.synced[0].atMs >= s.clock.now() - 100);
  s.ac.abort();
  await done;
});

test('changes within the minimum interval are applied together, once the interval has passed, as one incremental script', async (t) => {
  const s = setup();
  s.api.seed(servicesResource, web());
  const done = s.run();
  await s.clock.advanceUntil(() => s.nft.scripts.length === 1, 5000, 10);
  s.api.seed(endpointSlicesResource, slice('web-a', 'web', [{ ip: '10.244.0.5' }], webPorts));
  await s.clock.advance(100);
  s.api.seed(servicesResource, service('api', { clusterIP: '10.96.0.11', ports: [{ port: 443 }] }));
  await s.clock.advance(100);
  t.is(s.nft.scripts.length, 1, 'nothing before the interval');
  await s.clock.advanceUntil(() => s.nft.scripts.length === 2, 2000, 10);
  t.true(s.synced[1].atMs - s.synced[0].atMs >= 1000, 'at least minSyncPeriod after the previous sync');
  const second = s.nft.scripts[1];
  t.false(isFull(second));
  t.regex(second, /dnat to 10\.244\.0\.5:8080/);
  t.regex(second, /10\.96\.0\.11 \. tcp \. 443 : goto reject-chain/);
  await s.clock.advance(5000);
  t.is(s.nft.scripts.length, 2, 'no sync without a change');
  s.ac.abort();
  await done;
});

test('a refused script is retried, and the retry is a full sync; the proxy is unhealthy only once a change waits too long', async (t) => {
  const s = setup();
  s.api.seed(servicesResource, web());
  const done = s.run();
  await s.clock.advanceUntil(() => s.nft.scripts.length === 1, 5000, 10);
  s.nft.failures = 1_000_000;
  s.api.seed(endpointSlicesResource, slice('web-a', 'web', [{ ip: '10.244.0.5' }], webPorts));
  await s.clock.advance(2000);
  t.truthy(s.log.find('syncing the proxy rules failed; retrying')[0]);
  t.is(s.proxier.health(), undefined, 'not yet: within the health timeout');
  await s.clock.advance(HEALTH_TIMEOUT_MS);
  t.regex(s.proxier.health() ?? '', /proxy rules not synced for \d+s after a change/);
  s.nft.failures = 0;
  await s.clock.advanceUntil(() => s.nft.scripts.length === 2, 60_000, 100);
  t.true(isFull(s.nft.scripts[1]));
  t.regex(s.nft.scripts[1], /dnat to 10\.244\.0\.5:8080/);
  t.is(s.proxier.health(), undefined);
  s.ac.abort();
  await done;
});

test('when run ends, the table is deleted', async (t) => {
  const s = setup();
  const done = s.run();
  await s.clock.advanceUntil(() => s.nft.scripts.length === 1, 5000, 10);
  s.ac.abort();
  await done;
  t.is(s.nft.scripts.at(-1), 'add table ip svc-proxy\ndelete table ip svc-proxy\n');
  t.truthy(s.log.find('proxy rules removed')[0]);
});

test('a UDP endpoint removed: its conntrack entries are deleted after the sync', async (t) => {
  const s = setup();
  s.api.seed(servicesResource, service('dns', { clusterIP: '10.96.0.53', ports: [{ port: 53, protocol: 'UDP' }] }));
  s.api.seed(endpointSlicesResource, slice('dns-a', 'dns', [{ ip: '10.244.0.5' }, { ip: '10.244.0.6' }], [{ port: 53, protocol: 'UDP' }]));
  const done = s.run();
  await s.clock.advanceUntil(() => s.nft.scripts.length === 1, 5000, 10);
  s.api.seed(endpointSlicesResource, slice('dns-a', 'dns', [{ ip: '10.244.0.5' }], [{ port: 53, protocol: 'UDP' }]));
  await s.clock.advanceUntil(() => s.flows.length > 0, 5000, 10);
  t.deepEqual(s.flows, [['-p', 'udp', '--orig-dst', '10.96.0.53', '--dst-nat', '10.244.0.6']]);
  s.ac.abort();
  await done;
});

test('nothing is applied before both informers have listed', async (t) => {
  const s = setup();
  s.api.failNext((c) => c.verb === 'list' && c.resource === 'endpointslices', () => new Error('connection refused'), 3);
  const done = s.run();
  await flush();
  t.is(s.nft.scripts.length, 0);
  await s.clock.advanceUntil(() => s.nft.scripts.length === 1, 60_000, 100);
  t.true(isFull(s.nft.scripts[0]));
  s.ac.abort();
  await done;
});

test('with a rule writer (the iptables mode): each sync hands it the Service ports; a failure resets it before the retry; run\'s end cleans it up', async (t) => {
  const api = new FakeApiClient();
  const clock = new FakeClock();
  const calls: string[] = [];
  let failures = 1;
  const writer: RuleWriter = {
    sync: (ports) => {
      calls.push(`sync ${ports.map((p) => `${p.name}:${p.endpoints.length}`).join(',')}`);
      if (failures-- > 0) return Promise.reject(new Error('iptables-restore --noflush exited 2'));
      return Promise.resolve({ full: true, bytes: 1 });
    },
    reset: () => void calls.push('reset'),
    cleanUp: () => Promise.resolve(void calls.push('cleanUp')),
  };
  const proxier = new Proxier({ client: api, nodeName: 'n1', clock, log: new MemLog(), writer, minSyncPeriodMs: 1000 });
  api.seed(servicesResource, web());
  api.seed(endpointSlicesResource, slice('web-a', 'web', [{ ip: '10.244.0.5' }], webPorts));
  const ac = new AbortController();
  const done = proxier.run(ac.signal);
  await clock.advanceUntil(() => proxier.syncCount() === 1, 60_000, 100);
  t.deepEqual(calls, ['sync web:1', 'reset', 'sync web:1']);
  ac.abort();
  await done;
  t.is(calls.at(-1), 'cleanUp');
});
