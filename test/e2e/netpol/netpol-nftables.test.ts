/**
 * NetworkPolicy enforcement against a real svc-apiserver and the real nft: "pods" are network
 * namespaces of the test's own routed through a "node" namespace (pod-netns.ts), and Pod objects
 * bound to node n1 carry their addresses in status (written through the status sub-resource).
 * The controller programs the node namespace's table: with no policy traffic flows; a
 * default-deny ingress policy blocks; an allow rule (pods labelled role=client in namespaces
 * labelled team=x) lets just that pod in; deleting the policies restores traffic; an egress policy
 * with an ipBlock and except keeps a pod from web; the table is
 * gone after the controller stops. Bounded: every wait is a bounded number of attempts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import test from 'ava';
import { loadKubeconfig } from '../../../agent/client/kubeconfig';
import { HttpApiClient } from '../../../agent/client/http-api-client';
import { namespacesResource } from '../../../agent/client/resources';
import { NetworkPolicyController, allPodsResource, networkPoliciesResource } from '../../../agent/netpol/controller';
import { buildNetpolTable, renderNetpol } from '../../../agent/netpol/nft-netpol';
import { NftCommand, systemTool } from '../../../agent/proxy/nft-exec';
import { realClock } from '../../../agent/platform/clock';
import type { KObject } from '../../../apiserver/api/types';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { makePodNet, type PodNet } from './pod-netns';

const run = promisify(execFile);
let api: RunningApiServer | undefined;
let net: PodNet | undefined;
let client: HttpApiClient | undefined;
const stop = new AbortController();
const warnings: string[] = [];
const log = { debug: () => undefined, info: () => undefined, warn: (o: object, m: string) => void warnings.push(`${m} ${JSON.stringify(o)}`), error: (o: object, m: string) => void warnings.push(`${m} ${JSON.stringify(o)}`) };

/** Test pod name → its Kubernetes namespace and labels. */
const PODS: Record<string, { namespace: string; labels: Record<string, string> }> = {
  web: { namespace: 'default', labels: { app: 'web' } },
  trusted: { namespace: 'team-x', labels: { role: 'client' } }, // the only one the allow rule admits
  'same-ns': { namespace: 'default', labels: { role: 'client' } }, // right label, namespace not selected
  unlabelled: { namespace: 'team-x', labels: {} }, // namespace selected, label missing
};

test.before(async () => {
  net = makePodNet(`${process.pid % 100000}`, 10 + (process.pid % 200), Object.keys(PODS));
  await net.serve('web', 8080);
  api = await startApiServer();
  client = new HttpApiClient(await loadKubeconfig(api.kubeconfig), { timeoutMs: 10_000, userAgent: 'netpol-e2e' });
});

test.after.always(async () => {
  stop.abort();
  net?.destroy();
  await client?.close();
  await api?.stop();
});

async function until(probe: () => Promise<boolean> | boolean, attempts: number): Promise<boolean> {
  for (let i = 0; i < attempts; i++) if (await probe()) return true;
  return false;
}

const policy = (name: string, spec: Record<string, unknown>): KObject => ({ apiVersion: 'networking.svc.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: 'default' }, spec });

test.serial('no policy allows; default deny blocks; a pod and namespace selector allows just that pod; deleting restores; stop removes the table', async (t) => {
  const c = client!;
  const n = net!;
  await c.create(namespacesResource, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-x', labels: { team: 'x' } } });
  for (const [name, p] of Object.entries(PODS)) {
    const created = await c.create(allPodsResource, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: p.namespace, labels: p.labels },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox', ports: [{ name: 'http', containerPort: 8080 }] }] },
    });
    const ip = n.pods.get(name)!.ip;
    await c.update(allPodsResource, { ...created, status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } }, { subresource: 'status' });
  }
  const url = `http://${n.pods.get('web')!.ip}:8080/`;
  const get = (from: string, timeoutMs = 400) => n.get(from, url, timeoutMs);
  // The table as nft lists it, or '' when there is none.
  const listTable = async () => (await run('ip', ['netns', 'exec', n.nodeNs, systemTool('nft'), 'list', 'table', 'inet', 'svc-netpol']).catch(() => ({ stdout: '' }))).stdout;

  // A table a previous run left behind: replaced by the first sync.
  const nft = new NftCommand(['ip', 'netns', 'exec', n.nodeNs, systemTool('nft')]);
  await nft.apply('add table inet svc-netpol\nadd chain inet svc-netpol stale-from-before\n');
  const controller = new NetworkPolicyController({ client: c, nodeName: 'n1', clock: realClock, log, nft, minSyncPeriodMs: 100 });
  const running = controller.run(stop.signal);
  t.true(await until(async () => (await listTable()).includes('chain forward'), 500), `first sync never came; ${warnings.join('\n')}`);
  t.false((await listTable()).includes('stale-from-before'), 'the previous run\'s table was replaced');

  // No policy: every client reaches web.
  for (const from of ['trusted', 'same-ns', 'unlabelled']) t.is(await n.get(from, url, 2000), 'web', `${from} without policies`);

  // Default deny (ingress) for web.
  await c.create(networkPoliciesResource, policy('deny', { podSelector: { matchLabels: { app: 'web' } } }));
  t.true(await until(async () => (await get('trusted')) === 'ERR:TIMEOUT', 50), `default deny never blocked; ${warnings.join('\n')}`);
  t.is(await get('same-ns'), 'ERR:TIMEOUT');

  // Allow from role=client pods in team=x namespaces, to the named port.
  await c.create(
    networkPoliciesResource,
    policy('allow', {
      podSelector: { matchLabels: { app: 'web' } },
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'x' } }, podSelector: { matchLabels: { role: 'client' } } }], ports: [{ protocol: 'TCP', port: 'http' }] }],
    }),
  );
  t.true(await until(async () => (await get('trusted')) === 'web', 50), 'the selected pod is let in');
  t.is(await get('same-ns'), 'ERR:TIMEOUT', 'right label, wrong namespace');
  t.is(await get('unlabelled'), 'ERR:TIMEOUT', 'right namespace, no label');

  // Removing the policies restores traffic.
  await c.delete(networkPoliciesResource, 'allow', { namespace: 'default' });
  await c.delete(networkPoliciesResource, 'deny', { namespace: 'default' });
  t.true(await until(async () => (await get('same-ns')) === 'web', 50), 'no policy selects web any more');
  t.is(await get('unlabelled', 2000), 'web');

  // Web may start nothing (egress deny-all), yet answers: replies of allowed connections pass (ct state established).
  await c.create(networkPoliciesResource, policy('web-no-egress', { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Egress'] }));
  t.true(await until(async () => (await listTable()).includes('egress-'), 100), 'the egress chain is programmed');
  t.is(await get('same-ns', 2000), 'web', 'the reply leaves the egress-isolated pod');
  await c.delete(networkPoliciesResource, 'web-no-egress', { namespace: 'default' });
  t.true(await until(async () => !(await listTable()).includes('egress-'), 100), 'the egress chain is gone');

  // Egress with an ipBlock and except: the unlabelled pod may reach the pod network except web; others are not selected.
  const webIP = n.pods.get('web')!.ip;
  await c.create(networkPoliciesResource, {
    ...policy('egress', { podSelector: {}, policyTypes: ['Egress'], egress: [{ to: [{ ipBlock: { cidr: `${webIP.replace(/\.\d+$/, '.0')}/24`, except: [`${webIP}/32`] } }] }] }),
    metadata: { name: 'egress', namespace: 'team-x' },
  });
  t.true(await until(async () => (await get('unlabelled')) === 'ERR:TIMEOUT', 50), 'egress to the excepted address is denied');
  t.is(await get('same-ns', 2000), 'web', 'a pod of another namespace is not selected');
  await c.delete(networkPoliciesResource, 'egress', { namespace: 'team-x' });
  t.true(await until(async () => (await get('unlabelled')) === 'web', 50), 'egress restored');

  stop.abort();
  await running;
  t.is(await listTable(), '', 'the table is gone after the controller stopped');
  t.deepEqual(warnings.filter((w) => w.includes('failed')), []);
});

test.serial('the real nft accepts every rule form: both families, ipBlock with except, ranges, protocols, named ports, egress and ingress', async (t) => {
  const n = net!;
  const pod = (name: string, ips: string[], labels: Record<string, string>): KObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }, { name: 'dns', containerPort: 53, protocol: 'UDP' }] }] },
    status: { podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) },
  });
  const spec = {
    podSelector: {},
    policyTypes: ['Ingress', 'Egress'],
    ingress: [
      {
        from: [{ podSelector: { matchLabels: { role: 'client' } } }, { ipBlock: { cidr: '192.168.0.0/16', except: ['192.168.1.0/24', '192.168.2.0/24'] } }, { ipBlock: { cidr: 'fd00:1::/64', except: ['fd00:1::/96'] } }],
        ports: [{ protocol: 'TCP', port: 80 }, { protocol: 'UDP', port: 5000, endPort: 5010 }, { protocol: 'SCTP' }, { protocol: 'SCTP', port: 9000, endPort: 9009 }, { protocol: 'TCP', port: 'http' }],
      },
    ],
    egress: [{ to: [{ namespaceSelector: {} }], ports: [{ protocol: 'UDP', port: 'dns' }] }, { ports: [{ protocol: 'TCP', port: 443 }] }],
  };
  const table = buildNetpolTable({
    policies: [{ apiVersion: 'networking.svc.io/v1', kind: 'NetworkPolicy', metadata: { name: 'all', namespace: 'default' }, spec }],
    pods: [pod('a', ['10.253.0.5', 'fd00:2::5'], { role: 'client' }), pod('b', ['10.253.0.6', 'fd00:2::6'], { role: 'client' })],
    namespaces: [],
    nodeName: 'n1',
  });
  const nft = new NftCommand(['ip', 'netns', 'exec', n.nodeNs, systemTool('nft')]);
  await t.notThrowsAsync(nft.apply(renderNetpol(table)));
  const listed = (await run('ip', ['netns', 'exec', n.nodeNs, systemTool('nft'), 'list', 'table', 'inet', 'svc-netpol'])).stdout;
  t.regex(listed, /ip6 daddr vmap \{ fd00:2::5 : jump ingress-10_253_0_5, fd00:2::6 : jump ingress-10_253_0_6 \}/);
  t.regex(listed, /udp dport 5000-5010 return/);
  t.regex(listed, /sctp dport 9000-9009 return/);
  await nft.apply('add table inet svc-netpol\ndelete table inet svc-netpol\n');
});
