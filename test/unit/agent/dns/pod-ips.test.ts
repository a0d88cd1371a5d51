/** "pods verified": the pods' primary addresses by namespace, following the Pod informer's events as CoreDNS's pod index does. */
import test from 'ava';
import { PodIPs, podSummary, type PodAddress } from '../../../../agent/dns/pod-ips';
import { ClusterRecords } from '../../../../agent/dns/cluster-records';
import { ClusterZone, type PodAnswers } from '../../../../agent/dns/cluster-zone';
import { DEFAULT_CACHE_LIMITS } from '../../../../agent/dns/answer-cache';
import { ClusterDns, podsResource } from '../../../../agent/dns/cluster-dns';
import type { Decoded } from '../../../../agent/dns/packet';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { MemLog } from '../node/fakes/mem-log';
import { FakeClock, flush } from '../../../helpers/fake-clock';

const pod = (ns: string, name: string, podIP?: string, extra: Partial<PodAddress['metadata']> = {}): PodAddress => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: ns, name, ...extra },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
  status: { phase: 'Running', ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}) },
} as PodAddress);

test('a pod is found by its address in its own namespace only, under any spelling of the address', (t) => {
  const ips = new PodIPs();
  ips.upsert(pod('default', 'a', '10.1.0.9'));
  ips.upsert(pod('default', 'b', 'fd00:0::9'));
  t.true(ips.has('10.1.0.9', 'default'));
  t.false(ips.has('10.1.0.9', 'other'));
  t.false(ips.has('10.1.0.8', 'default'));
  t.true(ips.has('fd00::9', 'default'));
  t.true(ips.has('fd00:0:0::9', 'default'));
});

test('an address change moves the pod; a deleted pod, a pod being deleted and a pod without an address are not found', (t) => {
  const ips = new PodIPs();
  ips.upsert(pod('default', 'a', '10.1.0.9'));
  ips.upsert(pod('default', 'a', '10.1.0.10'));
  t.false(ips.has('10.1.0.9', 'default'));
  t.true(ips.has('10.1.0.10', 'default'));
  ips.upsert(pod('default', 'a', '10.1.0.10', { deletionTimestamp: '2026-01-01T00:00:00Z' }));
  t.false(ips.has('10.1.0.10', 'default'), 'terminating pods are ignored, as CoreDNS');
  ips.upsert(pod('default', 'a', '10.1.0.10'));
  ips.delete(pod('default', 'a', '10.1.0.10'));
  t.false(ips.has('10.1.0.10', 'default'));
  ips.upsert(pod('default', 'p', undefined));
  t.false(ips.has('', 'default'));
});

test('two pods with one address (a reused IP): the address stays found until both are gone', (t) => {
  const ips = new PodIPs();
  ips.upsert(pod('default', 'old', '10.1.0.9'));
  ips.upsert(pod('default', 'new', '10.1.0.9'));
  ips.delete(pod('default', 'old', '10.1.0.9'));
  t.true(ips.has('10.1.0.9', 'default'));
  ips.delete(pod('default', 'new', '10.1.0.9'));
  t.false(ips.has('10.1.0.9', 'default'));
});

test('the generation changes with the index only, not with a pod update that keeps its address', (t) => {
  const ips = new PodIPs();
  const g0 = ips.generation;
  ips.upsert(pod('default', 'a', '10.1.0.9'));
  const g1 = ips.generation;
  t.not(g1, g0);
  ips.upsert(pod('default', 'a', '10.1.0.9', { labels: { x: 'y' } }));
  t.is(ips.generation, g1);
  ips.delete(pod('default', 'gone', '10.1.0.7'));
  t.is(ips.generation, g1, 'deleting an unknown pod changes nothing');
  ips.delete(pod('default', 'a', '10.1.0.9'));
  t.not(ips.generation, g1);
});

test('podSummary keeps only what the index reads', (t) => {
  const s = podSummary(pod('ns', 'a', '10.1.0.9', { uid: 'u', resourceVersion: '7', labels: { x: 'y' } }));
  t.deepEqual(s, { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ns', name: 'a', uid: 'u', resourceVersion: '7' }, status: { podIP: '10.1.0.9' } });
  t.deepEqual(podSummary(pod('ns', 'b', undefined, { deletionTimestamp: 'x' })).metadata.deletionTimestamp, 'x');
});

function zoneWith(mode: PodAnswers['mode'], ips = new PodIPs()) {
  const z = new ClusterZone(new ClusterRecords('cluster.local'), 'cluster.local', undefined, { mode, exists: (ip, ns) => ips.has(ip, ns), get generation() { return ips.generation; } });
  return { z, ips };
}
const rcode = (z: ClusterZone, name: string, type = 'A') => z.answer(name, type)!.rcode;

test('pods verified: an A or AAAA record only for an address a pod of that namespace has; NXDOMAIN otherwise (CoreDNS)', (t) => {
  const { z, ips } = zoneWith('verified');
  ips.upsert(pod('default', 'a', '10.1.0.9'));
  ips.upsert(pod('default', 'b', 'fd00::9'));
  const a = z.answer('10-1-0-9.default.pod.cluster.local', 'A')!;
  t.is(a.rcode, 'NOERROR');
  t.deepEqual(a.answers.map((r) => (r as { data: unknown }).data), ['10.1.0.9']);
  t.deepEqual(z.answer('fd00--9.default.pod.cluster.local', 'AAAA')!.answers.map((r) => (r as { data: unknown }).data), ['fd00::9']);
  t.is(rcode(z, '10-1-0-9.default.pod.cluster.local', 'AAAA'), 'NOERROR', 'the name exists: NODATA for the other family');
  t.is(rcode(z, '10-1-0-9.other.pod.cluster.local'), 'NXDOMAIN', 'the pod is in another namespace');
  t.is(rcode(z, '10-1-0-8.default.pod.cluster.local'), 'NXDOMAIN', 'no pod has the address');
  t.is(rcode(z, 'not-an-ip.default.pod.cluster.local'), 'NXDOMAIN');
});

test('pods verified: the zone generation follows the pods, so cached encoded answers are dropped when a pod comes or goes', (t) => {
  const { z, ips } = zoneWith('verified');
  const g0 = z.generation;
  ips.upsert(pod('default', 'a', '10.1.0.9'));
  t.not(z.generation, g0);
  t.is(rcode(z, '10-1-0-9.default.pod.cluster.local'), 'NOERROR');
  const g1 = z.generation;
  ips.delete(pod('default', 'a', '10.1.0.9'));
  t.not(z.generation, g1);
  t.is(rcode(z, '10-1-0-9.default.pod.cluster.local'), 'NXDOMAIN');
});

test('pods disabled: every pod name is NXDOMAIN; pods insecure answers without looking at the pods', (t) => {
  const { z } = zoneWith('disabled');
  t.is(rcode(z, '10-1-0-9.default.pod.cluster.local'), 'NXDOMAIN');
  const insecure = zoneWith('insecure').z;
  t.deepEqual(insecure.answer('10-1-0-9.default.pod.cluster.local', 'A')!.answers.map((r) => (r as { data: unknown }).data), ['10.1.0.9']);
});

test('ClusterDns with pods verified follows every pod through the API (no node field selector) and answers from it', async (t) => {
  const api = new FakeApiClient();
  api.seed(podsResource, pod('default', 'a', '10.1.0.9'));
  api.seed(podsResource, { ...pod('other', 'b', '10.1.0.8'), spec: { nodeName: 'elsewhere', containers: [] } });
  const dns = new ClusterDns({ client: api, clock: new FakeClock(), log: new MemLog(), domain: 'cluster.local', listen: { address: '127.0.0.1', port: 0 }, upstreams: [], upstreamTimeoutMs: 100, cache: DEFAULT_CACHE_LIMITS, pods: 'verified' });
  const ac = new AbortController();
  const running = dns.run(ac.signal);
  t.teardown(async () => {
    ac.abort();
    await running;
  });
  await dns.server.listening();
  const RCODE = { 0: 'NOERROR', 3: 'NXDOMAIN' } as Record<number, string>;
  const ask = async (name: string) => RCODE[((await dns.handler.handle({ id: 1, type: 'query', opcode: 'QUERY', flags: 0, questions: [{ name, type: 'A', class: 'IN' }] } as unknown as Decoded)).flags ?? 0) & 15];
  t.is(await ask('10-1-0-9.default.pod.cluster.local'), 'NOERROR');
  t.is(await ask('10-1-0-8.other.pod.cluster.local'), 'NOERROR', 'a pod of another node');
  t.is(await ask('10-1-0-7.default.pod.cluster.local'), 'NXDOMAIN');
  await api.delete(podsResource, 'a', { namespace: 'default' });
  for (let i = 0; i < 100 && dns.podIPs.has('10.1.0.9', 'default'); i++) await flush();
  t.is(await ask('10-1-0-9.default.pod.cluster.local'), 'NXDOMAIN', 'gone with its pod');
});
