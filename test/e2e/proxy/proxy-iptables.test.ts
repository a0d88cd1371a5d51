/**
 * The network proxy's iptables mode against a real svc-apiserver and real iptables, in network
 * namespaces of the test's own (netns.ts), as proxy-nftables.test.ts does for the nftables mode.
 * The tools are iptables-legacy (x_tables): the fallback is for kernels and hosts where nftables
 * is not used, and legacy shares nothing with the nftables mode's backend, so this shows the
 * mode working without nf_tables. A Service and an EndpointSlice made through the API become
 * SVC-* chains in the client namespace; a connection to the cluster IP reaches the endpoint's
 * HTTP server in the other namespace; a node port on the client's own address answers; scaling
 * changes the answers; an empty slice is rejected; a previous run's chain is replaced at start;
 * ClientIP affinity keeps a client on one endpoint; and when the proxy stops no chain of ours is
 * left. Bounded: every wait is a bounded number of attempts.
 */
import test from 'ava';
import { loadKubeconfig } from '../../../agent/client/kubeconfig';
import { HttpApiClient } from '../../../agent/client/http-api-client';
import { IptablesWriter } from '../../../agent/proxy/ipt-writer';
import { IptablesCommand, systemTool } from '../../../agent/proxy/nft-exec';
import { Proxier, endpointSlicesResource } from '../../../agent/proxy/proxier';
import { realClock } from '../../../agent/platform/clock';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { makeTopology, type Topology } from './netns';
import { checkAffinity, createWeb, endpointSlice, recordingLog, until } from './proxy-fixtures';

let api: RunningApiServer | undefined;
let net: Topology | undefined;
let client: HttpApiClient | undefined;
const stop = new AbortController();
const { log, warnings } = recordingLog();

test.before(async () => {
  net = makeTopology(`i${process.pid % 100000}`, 10 + ((process.pid + 7) % 200));
  await Promise.all([net.serve(net.endpointIPs[0], 8080, 'a'), net.serve(net.endpointIPs[1], 8080, 'b')]);
  api = await startApiServer();
  client = new HttpApiClient(await loadKubeconfig(api.kubeconfig), { timeoutMs: 10_000, userAgent: 'proxy-iptables-e2e' });
});

test.after.always(async () => {
  stop.abort();
  net?.destroy(); // the namespaces' chains go with them
  await client?.close();
  await api?.stop();
});

/** iptables-legacy-save of the client namespace, nat and filter tables. */
const saved = () => net!.run(net!.clientNs, [systemTool('iptables-legacy-save')]);
const ourLines = async () => (await saved()).split('\n').filter((l) => l.includes('SVC-'));

test.serial('cluster IP and node port forward TCP to the endpoints; scaling changes the answers; no endpoints is rejected; stopping removes every chain', async (t) => {
  const c = client!;
  const n = net!;
  const { spec, url } = await createWeb(c);
  let slice = await c.create(endpointSlicesResource, endpointSlice([n.endpointIPs[0]]));

  // Chains a previous run left behind (killed, no clean stop), one jumped to from a built-in chain: replaced by the first sync.
  n.exec(n.clientNs, ['sh', '-c', `printf '*nat\\n:SVC-SVC-STALEFROMBEFORE - [0:0]\\n-A OUTPUT -d 10.0.0.0/8 -j SVC-SVC-STALEFROMBEFORE\\nCOMMIT\\n' | ${systemTool('iptables-legacy-restore')} --noflush`]);
  const writer = new IptablesWriter(new IptablesCommand('-legacy', ['ip', 'netns', 'exec', n.clientNs]), ['ip'], { clusterCIDRs: [], masqueradeAll: false });
  const proxier = new Proxier({ client: c, nodeName: 'n1', clock: realClock, log, writer, minSyncPeriodMs: 200 });
  const running = proxier.run(stop.signal);

  t.true(await until(async () => (await n.get(url)) === 'a', 100), `cluster IP never reached a; ${warnings.join('\n')}`);
  t.is(await n.get(`http://${n.clientIP}:${spec.ports[0].nodePort}/`), 'a', 'the node port on the node\'s own address');
  const rules = (await ourLines()).join('\n');
  t.false(rules.includes('STALEFROMBEFORE'), 'the previous run\'s chain and its jump were removed');
  t.regex(rules, /^-A PREROUTING .*-j SVC-SERVICES$/m);
  t.regex(rules, /^-A SVC-SEP-[A-Z2-7]{16} .*-j DNAT --to-destination 10\.251\.\d+\.2:8080$/m);

  // Scale up: both endpoints answer (random pick: each seen within a bounded number of requests).
  slice = await c.update(endpointSlicesResource, { ...slice, endpoints: endpointSlice([n.endpointIPs[0], n.endpointIPs[1]]).endpoints });
  t.true(await until(async () => (await ourLines()).some((l) => l.includes(`--to-destination ${n.endpointIPs[1]}:8080`)), 100), 'the second endpoint in the rules');
  t.true((await ourLines()).some((l) => /-m statistic --mode random --probability 0\.5/.test(l)));
  const seen = new Set<string>();
  t.true(await until(async () => seen.add(await n.get(url)).size === 2, 60), `answers: ${[...seen].join(',')}`);

  // Scale down to b only: a's chain goes, every answer is b.
  slice = await c.update(endpointSlicesResource, { ...slice, endpoints: endpointSlice([n.endpointIPs[1]]).endpoints });
  t.true(await until(async () => !(await ourLines()).some((l) => l.includes(`--to-destination ${n.endpointIPs[0]}:8080`)), 100), 'the first endpoint left the rules');
  for (let i = 0; i < 5; i++) t.is(await n.get(url), 'b');

  // No endpoints: the filter table rejects the connection at once (not left to time out).
  await c.update(endpointSlicesResource, { ...slice, endpoints: [] });
  t.true(await until(async () => (await n.get(url)) === 'ERR:ECONNREFUSED', 100));

  stop.abort();
  await running;
  t.deepEqual(await ourLines(), [], 'no chain of ours and no jump into one after the proxy stopped');
  t.deepEqual(warnings.filter((w) => w.includes('failed')), []);
});

test.serial('ClientIP session affinity through the recent module: one client keeps its endpoint while two are ready', async (t) => {
  const writer = new IptablesWriter(new IptablesCommand('-legacy', ['ip', 'netns', 'exec', net!.clientNs]), ['ip'], { clusterCIDRs: [], masqueradeAll: false });
  const start = (signal: AbortSignal) => new Proxier({ client: client!, nodeName: 'n1', clock: realClock, log, writer, minSyncPeriodMs: 200 }).run(signal);
  await checkAffinity(t, client!, net!, start, async () => (await ourLines()).some((l) => /-m recent --rcheck --seconds 10800 --reap --name SVC-SEP-/.test(l)));
  t.deepEqual(await ourLines(), []);
});
