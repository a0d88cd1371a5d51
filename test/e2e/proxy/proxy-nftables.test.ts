/**
 * The network proxy against a real svc-apiserver and the real nft, in network namespaces of the
 * test's own (netns.ts): a Service and an EndpointSlice made through the API are programmed into
 * the client namespace's table; a connection to the cluster IP there reaches the endpoint's HTTP
 * server in the other namespace; scaling the slice changes the rules and the answers; a node
 * port on the client's own address answers too; an empty slice is rejected; and when the proxy
 * stops its table is gone. Bounded: every wait is a bounded number of attempts.
 */
import test from 'ava';
import { loadKubeconfig } from '../../../agent/client/kubeconfig';
import { HttpApiClient } from '../../../agent/client/http-api-client';
import { ConntrackCommand, NftCommand, systemTool } from '../../../agent/proxy/nft-exec';
import { NftWriter } from '../../../agent/proxy/nft-writer';
import { Proxier, endpointSlicesResource, servicesResource } from '../../../agent/proxy/proxier';
import { realClock } from '../../../agent/platform/clock';
import type { KObject } from '../../../apiserver/api/types';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { makeTopology, type Topology } from './netns';
import { checkAffinity, createWeb, endpointSlice, recordingLog, until } from './proxy-fixtures';

/** The nftables mode's writer, its nft run in the client namespace (IPv4 only). */
const nftWriter = (n: Topology) => new NftWriter(new NftCommand(['ip', 'netns', 'exec', n.clientNs, systemTool('nft')]), ['ip'], { clusterCIDRs: [], masqueradeAll: false });

let api: RunningApiServer | undefined;
let net: Topology | undefined;
let client: HttpApiClient | undefined;
const stop = new AbortController();
const udpStop = new AbortController();
const { log, warnings } = recordingLog();

test.before(async () => {
  net = makeTopology(`p${process.pid % 100000}`, 10 + (process.pid % 200));
  await Promise.all([net.serve(net.endpointIPs[0], 8080, 'a'), net.serve(net.endpointIPs[1], 8080, 'b'), net.serveUdp(net.endpointIPs[0], 5353, 'a'), net.serveUdp(net.endpointIPs[1], 5353, 'b')]);
  api = await startApiServer();
  client = new HttpApiClient(await loadKubeconfig(api.kubeconfig), { timeoutMs: 10_000, userAgent: 'proxy-e2e' });
});

test.after.always(async () => {
  stop.abort();
  udpStop.abort();
  net?.destroy();
  await client?.close();
  await api?.stop();
});

const table = () => net!.run(net!.clientNs, [systemTool('nft'), 'list', 'table', 'ip', 'svc-proxy']);

test.serial('cluster IP and node port reach the endpoints; scaling changes rules and answers; stopping removes the table', async (t) => {
  const c = client!;
  const n = net!;
  const { spec, url } = await createWeb(c);
  let slice = await c.create(endpointSlicesResource, endpointSlice([n.endpointIPs[0]]));

  // A table a previous run left behind (killed, no clean shutdown): replaced by the first sync.
  n.exec(n.clientNs, [systemTool('nft'), 'add table ip svc-proxy; add chain ip svc-proxy stale-from-before']);
  const proxier = new Proxier({ client: c, nodeName: 'n1', clock: realClock, log, writer: nftWriter(n), minSyncPeriodMs: 200 });
  const running = proxier.run(stop.signal);

  t.true(await until(async () => (await n.get(url)) === 'a', 100), `cluster IP never reached a; ${warnings.join('\n')}`);
  t.is(await n.get(`http://${n.clientIP}:${spec.ports[0].nodePort}/`), 'a', 'the node port on the node\'s own address');
  t.false((await table()).includes('stale-from-before'), 'the previous run\'s table was replaced');

  // Scale up: both endpoints answer (random pick: each seen within a bounded number of requests).
  slice = await c.update(endpointSlicesResource, { ...slice, endpoints: endpointSlice([n.endpointIPs[0], n.endpointIPs[1]]).endpoints });
  t.true(await until(async () => (await table()).includes(`dnat to ${n.endpointIPs[1]}:8080`), 100), 'the second endpoint in the rules');
  const seen = new Set<string>();
  t.true(await until(async () => seen.add(await n.get(url)).size === 2, 60), `answers: ${[...seen].join(',')}`);
  t.deepEqual([...seen].sort(), ['a', 'b']);

  // Scale down to b only: a's rule goes, every answer is b.
  slice = await c.update(endpointSlicesResource, { ...slice, endpoints: endpointSlice([n.endpointIPs[1]]).endpoints });
  t.true(await until(async () => !(await table()).includes(`dnat to ${n.endpointIPs[0]}:8080`), 100), 'the first endpoint left the rules');
  for (let i = 0; i < 5; i++) t.is(await n.get(url), 'b');

  // No endpoints: the connection is rejected at once (not left to time out).
  await c.update(endpointSlicesResource, { ...slice, endpoints: [] });
  t.true(await until(async () => (await n.get(url)) === 'ERR:ECONNREFUSED', 100));

  stop.abort();
  await running;
  await t.throwsAsync(table(), undefined, 'the table is gone after the proxy stopped');
  t.deepEqual(warnings.filter((w) => w.includes('failed')), []);
});

test.serial('a removed UDP endpoint: its conntrack entry is deleted, so the same client flow moves to the remaining endpoint', async (t) => {
  const c = client!;
  const n = net!;
  const svcObject: KObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'dns', namespace: 'default' }, spec: { ports: [{ name: 'dns', port: 53, targetPort: 5353, protocol: 'UDP' }] } };
  const svc = await c.create(servicesResource, svcObject);
  const cip = (svc.spec as { clusterIP: string }).clusterIP;
  const udpPort = { name: 'dns', port: 5353, protocol: 'UDP' };
  const slice = await c.create(endpointSlicesResource, endpointSlice([n.endpointIPs[0]], 'dns', udpPort));
  const inNs = ['ip', 'netns', 'exec', n.clientNs];
  const proxier = new Proxier({ client: c, nodeName: 'n1', clock: realClock, log, writer: nftWriter(n), conntrack: new ConntrackCommand([...inNs, systemTool('conntrack')]), minSyncPeriodMs: 200 });
  const running = proxier.run(udpStop.signal);
  // One client flow: the same source port every time, so every datagram is the same conntrack entry.
  const ask = () => n.udp(cip, 53, 40053);
  t.true(await until(async () => (await ask()) === 'a', 100), `no answer from a; ${warnings.join('\n')}`);
  t.regex(await n.run(n.clientNs, [systemTool('conntrack'), '-L', '-p', 'udp', '--orig-dst', cip]), new RegExp(`src=${n.endpointIPs[0].replace(/\./g, '\\.')} `));
  await c.update(endpointSlicesResource, { ...slice, endpoints: endpointSlice([n.endpointIPs[1]]).endpoints });
  // Without the cleanup the entry would keep the flow on a (whose server still answers) for as long as it is used.
  t.true(await until(async () => (await ask()) === 'b', 100), 'the flow moved to b');
  udpStop.abort();
  await running;
  t.deepEqual(warnings.filter((w) => w.includes('failed')), []);
});

test.serial('ClientIP session affinity: one client keeps its endpoint while two are ready', async (t) => {
  const start = (signal: AbortSignal) => new Proxier({ client: client!, nodeName: 'n1', clock: realClock, log, writer: nftWriter(net!), minSyncPeriodMs: 200 }).run(signal);
  await checkAffinity(t, client!, net!, start);
});

test.serial('hairpin: an endpoint reaching itself through its Service is masqueraded, so its own connection is answered', async (t) => {
  const c = client!;
  const n = net!;
  // The client namespace is the node here: it forwards the endpoint's packets back to it (namespace-local setting).
  n.exec(n.clientNs, ['sysctl', '-qw', 'net.ipv4.ip_forward=1']);
  const svcObject: KObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'self', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] } };
  const svc = await c.create(servicesResource, svcObject);
  const cip = (svc.spec as { clusterIP: string }).clusterIP;
  const url = `http://${cip}:80/`;
  // The endpoint side's default route is on-link (no one answers ARP for a cluster IP): this one goes through the node.
  n.exec(n.endpointNs, ['ip', 'route', 'add', `${cip}/32`, 'via', n.clientIP]);
  await c.create(endpointSlicesResource, endpointSlice([n.endpointIPs[0]], 'self'));
  const selfStop = new AbortController();
  const proxier = new Proxier({ client: c, nodeName: 'n1', clock: realClock, log, writer: nftWriter(n), minSyncPeriodMs: 200 });
  const running = proxier.run(selfStop.signal);
  try {
    t.true(await until(async () => (await table().catch(() => '')).includes(`dnat to ${n.endpointIPs[0]}:8080`), 100), 'the Service is programmed');
    // Unmasqueraded, the DNATed packet would reach the endpoint from its own address and be dropped as martian.
    t.is(await n.getFromEndpoint(url, n.endpointIPs[0]), 'a');
  } finally {
    selfStop.abort();
    await running;
  }
});
