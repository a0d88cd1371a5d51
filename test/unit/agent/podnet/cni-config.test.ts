import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { CNI_CONFIG_FILE, CNI_NETWORK_NAME, foreignConfigs, isCniConfigName, podNetworkConflist } from '../../../../agent/podnet/cni-config';
import { CniConfigWriter } from '../../../../agent/podnet/cni-config-writer';

interface Conf {
  cniVersion: string;
  name: string;
  plugins: { type: string; bridge?: string; isGateway?: boolean; ipMasq?: boolean; capabilities?: Record<string, boolean>; ipam?: { type: string; ranges: { subnet: string }[][]; routes: { dst: string }[]; dataDir: string } }[];
}

test('the conflist is a bridge with host-local IPAM on the podCIDR, then portmap for hostPort', (t) => {
  const conf = JSON.parse(podNetworkConflist({ podCIDRs: ['10.244.1.0/24'], ipamDataDir: '/var/lib/svc-node/cni/networks' })) as Conf;
  t.is(conf.name, CNI_NETWORK_NAME);
  t.deepEqual(conf.plugins.map((p) => p.type), ['bridge', 'portmap']);
  const bridge = conf.plugins[0];
  t.is(bridge.bridge, 'cni0');
  t.true(bridge.isGateway);
  t.false(bridge.ipMasq, 'pod-to-pod traffic across nodes keeps its source address');
  t.deepEqual(bridge.ipam, { type: 'host-local', ranges: [[{ subnet: '10.244.1.0/24' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: '/var/lib/svc-node/cni/networks' });
  t.deepEqual(conf.plugins[1].capabilities, { portMappings: true });
});

test('dual-stack podCIDRs make one range and one default route per family', (t) => {
  const conf = JSON.parse(podNetworkConflist({ podCIDRs: ['10.244.1.0/24', 'fd00:10:244:1::/64'], ipamDataDir: '/d' })) as Conf;
  t.deepEqual(conf.plugins[0].ipam!.ranges, [[{ subnet: '10.244.1.0/24' }], [{ subnet: 'fd00:10:244:1::/64' }]]);
  t.deepEqual(conf.plugins[0].ipam!.routes, [{ dst: '0.0.0.0/0' }, { dst: '::/0' }]);
});

test('malformed or missing podCIDRs are refused, naming the value', (t) => {
  for (const bad of ['10.244.1.0', '10.244.1.0/33', 'x/24', '10.244.1.0/']) {
    t.throws(() => podNetworkConflist({ podCIDRs: [bad], ipamDataDir: '/d' }), { message: `invalid podCIDR ${JSON.stringify(bad)}` });
  }
  t.throws(() => podNetworkConflist({ podCIDRs: [], ipamDataDir: '/d' }), { message: /no podCIDR/ });
});

test('config files are what libcni loads (.conf, .conflist, .json); ours is not foreign', (t) => {
  t.true(isCniConfigName('10-flannel.conflist'));
  t.true(isCniConfigName('87-podman.json'));
  t.true(isCniConfigName('99-loopback.conf'));
  t.false(isCniConfigName('README'));
  t.false(isCniConfigName(`.${CNI_CONFIG_FILE}.1.tmp`));
  t.deepEqual(foreignConfigs([CNI_CONFIG_FILE, 'notes.txt', '20-calico.conflist', '05-cilium.conf']), ['05-cilium.conf', '20-calico.conflist']);
});

async function confDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'svc-cni-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  return path.join(root, 'net.d');
}

test('the writer makes the directory, writes 0644 once, keeps it when unchanged and rewrites it for a new podCIDR', async (t) => {
  const dir = await confDir(t);
  const w = new CniConfigWriter({ confDir: dir, ipamDataDir: '/ipam' });
  t.deepEqual(await w.sync([]), { kind: 'waiting' });
  t.false(existsSync(dir), 'nothing to write: the directory is not made');
  const old = process.umask(0o077);
  try {
    t.deepEqual(await w.sync(['10.244.1.0/24']), { kind: 'written' });
  } finally {
    process.umask(old);
  }
  t.deepEqual(await readdir(dir), [CNI_CONFIG_FILE], 'no temporary file is left');
  t.is((await stat(w.file)).mode & 0o777, 0o644);
  t.deepEqual(await w.sync(['10.244.1.0/24']), { kind: 'unchanged' });
  t.deepEqual(await w.sync(['10.244.7.0/24']), { kind: 'written' });
  t.regex(await readFile(w.file, 'utf8'), /10\.244\.7\.0\/24/);
  t.true(await w.remove());
  t.deepEqual(await readdir(dir), []);
  t.false(await w.remove(), 'nothing left to remove');
});

test("a cluster's own config is left alone and ours is taken away, so the runtime uses theirs", async (t) => {
  const dir = await confDir(t);
  const w = new CniConfigWriter({ confDir: dir, ipamDataDir: '/ipam' });
  await w.sync(['10.244.1.0/24']);
  await writeFile(path.join(dir, '20-calico.conflist'), '{"name":"k8s-pod-network"}');
  await chmod(path.join(dir, '20-calico.conflist'), 0o600);
  t.deepEqual(await w.sync(['10.244.1.0/24']), { kind: 'foreign', files: ['20-calico.conflist'], removedOurs: true });
  t.deepEqual(await readdir(dir), ['20-calico.conflist']);
  t.is(await readFile(path.join(dir, '20-calico.conflist'), 'utf8'), '{"name":"k8s-pod-network"}');
  t.is((await stat(path.join(dir, '20-calico.conflist'))).mode & 0o777, 0o600);
});

test('a file of our name holding another network is theirs: never rewritten nor removed', async (t) => {
  const dir = await confDir(t);
  await mkdir(dir, { recursive: true });
  const theirs = '{"name":"someone-else","plugins":[]}';
  await writeFile(path.join(dir, CNI_CONFIG_FILE), theirs);
  const w = new CniConfigWriter({ confDir: dir, ipamDataDir: '/ipam' });
  t.deepEqual(await w.sync(['10.244.1.0/24']), { kind: 'foreign', files: [CNI_CONFIG_FILE], removedOurs: false });
  t.false(await w.remove());
  t.is(await readFile(path.join(dir, CNI_CONFIG_FILE), 'utf8'), theirs);
});
