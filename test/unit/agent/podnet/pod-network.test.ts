import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { ClientError } from '../../../../agent/client/client-error';
import { nodesResource } from '../../../../agent/client/resources';
import { CNI_CONFIG_FILE } from '../../../../agent/podnet/cni-config';
import { CniConfigWriter } from '../../../../agent/podnet/cni-config-writer';
import { PodNetwork } from '../../../../agent/podnet/pod-network';
import { ROUTE_PROTO, RouteTable, type IpRunner } from '../../../../agent/podnet/route-table';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock, flush } from '../../../helpers/fake-clock';

const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => silent } as never;

/** `ip` over an in-memory main table: routes by dst, with their gateway and protocol. */
class FakeIp {
  readonly table = new Map<string, { via: string; proto: string }>();
  readonly calls: string[] = [];
  failReplace = 0;
  readonly run: IpRunner = (args) => Promise.resolve().then(() => this.apply(args));

  private apply(args: readonly string[]): string {
    this.calls.push(args.join(' '));
    const [family, ...rest] = args[0] === '-j' ? [args[1], '-j', ...args.slice(2)] : args;
    const v6 = family === '-6';
    const ofFamily = (dst: string) => dst.includes(':') === v6;
    if (rest[0] === '-j' && rest[2] === 'show') {
      const proto = rest[4];
      return JSON.stringify([...this.table].filter(([dst, r]) => ofFamily(dst) && r.proto === proto).map(([dst, r]) => ({ dst, gateway: r.via, protocol: r.proto })));
    }
    const [, verb, dst] = rest;
    if (verb === 'replace') {
      if (this.failReplace > 0) {
        this.failReplace--;
        throw new Error(`ip ${args.join(' ')}: Error: Nexthop has invalid gateway.`);
      }
      this.table.set(dst, { via: rest[4], proto: rest[6] });
      return '';
    }
    if (verb === 'del') {
      const r = this.table.get(dst);
      if (!r || r.proto !== rest[4]) throw new Error(`ip ${args.join(' ')}: RTNETLINK answers: No such process`);
      this.table.delete(dst);
      return '';
    }
    throw new Error(`unexpected ip ${args.join(' ')}`);
  }

  routes(): Record<string, string> {
    return Object.fromEntries([...this.table].map(([dst, r]) => [dst, `${r.via} proto ${r.proto}`]));
  }
}

const node = (name: string, podCIDR: string | undefined, ip: string): KObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: podCIDR ? { podCIDR, podCIDRs: [podCIDR] } : {},
  status: { addresses: [{ type: 'InternalIP', address: ip }] },
});

// One fake clock per test; the tests run serially.
let clock = new FakeClock();

/** Waits for check, letting fake time pass 10 ms a round (back-offs), at most 200 rounds. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await flush(5);
    await clock.advance(10);
  }
  throw new Error(`never: ${what}`);
}

async function setUp(t: { teardown(fn: () => Promise<void>): void }, o: { routes?: boolean } = {}) {
  const root = await mkdtemp(path.join(tmpdir(), 'svc-podnet-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  clock = new FakeClock();
  const api = new FakeApiClient();
  const ip = new FakeIp();
  const confDir = path.join(root, 'net.d');
  const cni = new CniConfigWriter({ confDir, ipamDataDir: path.join(root, 'ipam') });
  const net = new PodNetwork({ client: api, nodeName: 'a', selfIPs: () => ['192.0.2.1'], cni, routes: o.routes === false ? undefined : new RouteTable(ip.run), clock, log: silent });
  const ac = new AbortController();
  let running: Promise<void> | undefined;
  const start = () => {
    running = net.run(ac.signal);
  };
  const stop = async () => {
    ac.abort();
    await running;
  };
  t.teardown(stop);
  return { api, ip, confDir, start, stop, net };
}

test.serial('routes follow the other Nodes: added with a podCIDR, changed with it, deleted with the Node; all gone at shutdown with the CNI config', async (t) => {
  const { api, ip, confDir, start, stop } = await setUp(t);
  api.seed(nodesResource, node('a', '10.244.0.0/24', '192.0.2.1'));
  api.seed(nodesResource, node('b', '10.244.1.0/24', '192.0.2.2'));
  api.seed(nodesResource, node('c', undefined, '192.0.2.3'));
  start();
  await until('the route to b and the CNI config', async () => ip.table.size === 1 && (await readdir(confDir).catch(() => [] as string[])).includes(CNI_CONFIG_FILE));
  t.deepEqual(ip.routes(), { '10.244.1.0/24': `192.0.2.2 proto ${ROUTE_PROTO}` });

  api.mutate(nodesResource, 'c', undefined, (n) => (n['spec'] = { podCIDR: '10.244.2.0/24', podCIDRs: ['10.244.2.0/24'] }));
  await until('the route to c', () => ip.table.has('10.244.2.0/24'));
  api.mutate(nodesResource, 'b', undefined, (n) => (n['status'] = { addresses: [{ type: 'InternalIP', address: '192.0.2.22' }] }));
  await until('b through its new address', () => ip.table.get('10.244.1.0/24')?.via === '192.0.2.22');
  api.remove(nodesResource, 'c');
  await until('the route to c gone', () => !ip.table.has('10.244.2.0/24'));
  t.deepEqual(ip.routes(), { '10.244.1.0/24': `192.0.2.22 proto ${ROUTE_PROTO}` });

  ip.table.set('192.168.0.0/16', { via: '192.0.2.254', proto: 'boot' });
  await stop();
  t.deepEqual(ip.routes(), { '192.168.0.0/16': '192.0.2.254 proto boot' }, "ours are gone, the host's own stay");
  t.deepEqual(await readdir(confDir), []);
});

test.serial('a new podCIDR for its own Node rewrites the CNI config', async (t) => {
  const { api, confDir, start } = await setUp(t);
  api.seed(nodesResource, node('a', undefined, '192.0.2.1'));
  start();
  await until('the Node listed', () => api.callsOf('watch').length > 0);
  await flush();
  t.deepEqual(await readdir(confDir).catch(() => [] as string[]), [], 'nothing before the Node has a podCIDR');
  api.mutate(nodesResource, 'a', undefined, (n) => (n['spec'] = { podCIDR: '10.244.5.0/24' }));
  await until('the config for 10.244.5.0/24', async () => (await readFile(path.join(confDir, CNI_CONFIG_FILE), 'utf8').catch(() => '')).includes('10.244.5.0/24'));
  api.mutate(nodesResource, 'a', undefined, (n) => (n['spec'] = { podCIDR: '10.244.6.0/24', podCIDRs: ['10.244.6.0/24'] }));
  await until('the config for 10.244.6.0/24', async () => (await readFile(path.join(confDir, CNI_CONFIG_FILE), 'utf8')).includes('10.244.6.0/24'));
  t.notRegex(await readFile(path.join(confDir, CNI_CONFIG_FILE), 'utf8'), /10\.244\.5\./);
});

test.serial('routes of an earlier run that no Node wants are deleted at start; wanted ones are kept', async (t) => {
  const { api, ip, start } = await setUp(t);
  ip.table.set('10.244.9.0/24', { via: '192.0.2.9', proto: ROUTE_PROTO });
  ip.table.set('10.244.1.0/24', { via: '192.0.2.2', proto: ROUTE_PROTO });
  ip.table.set('10.99.0.0/16', { via: '192.0.2.254', proto: 'static' });
  api.seed(nodesResource, node('b', '10.244.1.0/24', '192.0.2.2'));
  start();
  await until('the stale route gone', () => !ip.table.has('10.244.9.0/24'));
  t.true(ip.table.has('10.244.1.0/24'));
  t.true(ip.table.has('10.99.0.0/16'), 'a route of another protocol is never touched');
});

test.serial('a failed route write is retried, and what was written is still removed at shutdown', async (t) => {
  const { api, ip, start, stop } = await setUp(t);
  ip.failReplace = 1;
  api.seed(nodesResource, node('b', '10.244.1.0/24', '192.0.2.2'));
  start();
  await until('the route after the retry', () => ip.table.has('10.244.1.0/24'));
  t.is(ip.calls.filter((c) => c.includes('replace')).length, 2);
  await stop();
  t.is(ip.table.size, 0);
});

test.serial('with route management off, `ip` is never run; the CNI config is still written', async (t) => {
  const { api, ip, confDir, start } = await setUp(t, { routes: false });
  api.seed(nodesResource, node('a', '10.244.0.0/24', '192.0.2.1'));
  api.seed(nodesResource, node('b', '10.244.1.0/24', '192.0.2.2'));
  start();
  await until('the CNI config', async () => (await readdir(confDir).catch(() => [] as string[])).includes(CNI_CONFIG_FILE));
  await flush();
  t.deepEqual(ip.calls, []);
});

test.serial('with routes off only its own Node is read (a field selector), so a node identity refused the list of all Nodes still gets its CNI config', async (t) => {
  const { api, ip, confDir, start } = await setUp(t, { routes: false });
  api.failNext(
    (c) => c.verb === 'list' && c.resource === 'nodes' && !(c.opts as { fieldSelector?: string } | undefined)?.fieldSelector,
    () => new ClientError(403, 'Forbidden', 'nodes is forbidden: User "system:node:a" cannot list resource "nodes" at the cluster scope'),
    1000,
  );
  api.seed(nodesResource, node('a', '10.244.0.0/24', '192.0.2.1'));
  api.seed(nodesResource, node('b', '10.244.1.0/24', '192.0.2.2'));
  start();
  await until('the CNI config', async () => (await readdir(confDir).catch(() => [] as string[])).includes(CNI_CONFIG_FILE));
  t.deepEqual(ip.calls, []);
  t.true(api.callsOf('list', 'nodes').every((c) => (c.opts as { fieldSelector?: string }).fieldSelector === 'metadata.name=a'));
});

test('listing our routes on a kernel without IPv6 reads the IPv4 ones; other failures are errors', async (t) => {
  const table = (fail6: string) =>
    new RouteTable((args) => {
      if (args.includes('-6')) return Promise.reject(new Error(`ip ${args.join(' ')}: ${fail6}`));
      return Promise.resolve(JSON.stringify([{ dst: '10.244.1.0/24', gateway: '192.0.2.2', protocol: ROUTE_PROTO }]));
    });
  t.deepEqual(await table('Error: Address family not supported by protocol').list(), [{ dst: '10.244.1.0/24', via: '192.0.2.2' }]);
  await t.throwsAsync(table('Cannot open netlink socket: Permission denied').list(), { message: /Permission denied/ });
});
