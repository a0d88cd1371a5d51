/** The networkPolicy section of the agent configuration: defaults, and errors naming the field. */
import test from 'ava';
import { loadAgentConfig, type ConfigEnv } from '../../../../agent/config/load';

const head = 'kind: NodeAgentConfiguration\napiVersion: nodeagent.config.svc.io/v1beta1\n';
const env = (files: Record<string, string>): ConfigEnv => ({
  readFile: (p) => (p in files ? Promise.resolve(files[p]) : Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }))),
  readdir: () => Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' })),
  hostname: () => 'n1',
  cwd: '/',
});
const load = (yaml: string) => loadAgentConfig(['--config', '/etc/svc/node.yaml'], env({ '/etc/svc/node.yaml': head + yaml }));

test('defaults: nftables, 1s minimum sync interval', async (t) => {
  t.deepEqual((await loadAgentConfig([], env({}))).config.networkPolicy, { mode: 'nftables', minSyncPeriod: 1000 });
});

test('set: disabled, 250ms', async (t) => {
  t.deepEqual((await load('networkPolicy:\n  mode: disabled\n  minSyncPeriod: 250ms\n')).config.networkPolicy, { mode: 'disabled', minSyncPeriod: 250 });
});

test('an unknown mode is refused naming the field', async (t) => {
  await t.throwsAsync(load('networkPolicy:\n  mode: iptables\n'), { message: /^\/etc\/svc\/node\.yaml: field networkPolicy\.mode: .*"iptables"/ });
});
