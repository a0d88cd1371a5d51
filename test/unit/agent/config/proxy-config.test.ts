/** The proxy section of the agent configuration: defaults, and errors naming the file and the field. */
import test from 'ava';
import { ConfigError, loadAgentConfig, type ConfigEnv } from '../../../../agent/config/load';

const head = 'kind: NodeAgentConfiguration\napiVersion: nodeagent.config.svc.io/v1beta1\n';
function memEnv(files: Record<string, string>): ConfigEnv {
  const enoent = (p: string) => Object.assign(new Error(`ENOENT: no such file or directory, open '${p}'`), { code: 'ENOENT' });
  return {
    readFile: (p) => (p in files ? Promise.resolve(files[p]) : Promise.reject(enoent(p))),
    readdir: (d) => Promise.reject(enoent(d)),
    hostname: () => 'n1',
    cwd: '/work',
  };
}
const load = (yaml: string) => loadAgentConfig(['--config', '/etc/svc/node.yaml'], memEnv({ '/etc/svc/node.yaml': head + yaml }));

test('defaults: mode unset (chosen at start), 1s minimum sync interval, no cluster CIDR, no masqueradeAll, the kernel check on', async (t) => {
  const cfg = await loadAgentConfig([], memEnv({}));
  t.deepEqual(cfg.config.proxy, { mode: '', minSyncPeriod: 1000, clusterCIDR: '', masqueradeAll: false, skipKernelVersionCheck: false });
});

test('overrides are read, a dual-stack cluster CIDR included', async (t) => {
  const ipt = await load('proxy:\n  mode: iptables\n');
  t.is(ipt.config.proxy.mode, 'iptables');
  const cfg = await load('proxy:\n  mode: disabled\n  minSyncPeriod: 250ms\n  clusterCIDR: 10.244.0.0/16,fd00:244::/56\n  masqueradeAll: true\n');
  t.like(cfg.config.proxy, { mode: 'disabled', minSyncPeriod: 250, clusterCIDR: '10.244.0.0/16,fd00:244::/56', masqueradeAll: true });
});

test('bad values name the file and the field', async (t) => {
  const cases: [string, RegExp][] = [
    ['proxy:\n  mode: ipvs\n', /^\/etc\/svc\/node\.yaml: field proxy\.mode: .*"ipvs"/],
    ['proxy:\n  clusterCIDR: 10.244.0.0\n', /^\/etc\/svc\/node\.yaml: field proxy\.clusterCIDR: invalid value "10\.244\.0\.0": "10\.244\.0\.0" is not a CIDR/],
    ['proxy:\n  clusterCIDR: 10.0.0.0/8,10.1.0.0/16\n', /^\/etc\/svc\/node\.yaml: field proxy\.clusterCIDR: .*at most one CIDR per IP family/],
    ['proxy:\n  minSyncPeriod: soon\n', /^\/etc\/svc\/node\.yaml: field proxy\.minSyncPeriod: /],
  ];
  for (const [yaml, re] of cases) {
    const e = await t.throwsAsync(load(yaml), { instanceOf: ConfigError });
    t.regex(e.message, re);
  }
});
