/** Which proxy mode svc-node runs, and when it runs none: switched off, the CRI simulator, an explicit mode the node cannot run (a configuration error), the choice when unset. */
import test from 'ava';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadAgentConfig, type ConfigEnv } from '../../../../agent/config/load';
import { AgentMetrics } from '../../../../agent/metrics/agent-metrics';
import { HeartbeatHealth } from '../../../../agent/node/heartbeat-health';
import { realClock } from '../../../../agent/platform/clock';
import { proxyMetrics } from '../../../../agent/proxy/proxy-metrics';
import type { AgentContext } from '../../../../agent/wiring/context';
import { chooseProxyMode, planProxy, runAfterLeftovers, startProxy, type ProxyHost } from '../../../../agent/wiring/proxy';
import { ConfigError } from '../../../../agent/config/config-error';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import type { HttpApiClient } from '../../../../agent/client/http-api-client';

const head = 'kind: NodeAgentConfiguration\napiVersion: nodeagent.config.svc.io/v1beta1\n';
const env = (yaml: string): ConfigEnv => ({
  readFile: (p) => (p === '/c.yaml' ? Promise.resolve(head + yaml) : Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }))),
  readdir: () => Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' })),
  hostname: () => 'n1',
  cwd: '/',
});

async function context(yaml: string): Promise<{ ctx: AgentContext; lines: Record<string, unknown>[] }> {
  const cfg = await loadAgentConfig(['--config', '/c.yaml'], env(yaml));
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  const ctx: AgentContext = {
    cfg,
    log,
    notifier: { ready: () => undefined, status: () => undefined, stopping: () => undefined, watchdog: () => undefined } as unknown as AgentContext['notifier'],
    signal: new AbortController().signal,
    clock: realClock,
    running: { loops: [], clients: [] },
    health: new HeartbeatHealth({ requestTimeoutMs: 1000 }),
    metrics: new AgentMetrics(),
  };
  return { ctx, lines };
}

// nft, ipt: null for a system without the binary (undefined would take the default).
const host = (release: string, env: NodeJS.ProcessEnv = {}, nft: string | null = '/usr/sbin/nft', o: { nftWorks?: boolean; ipt?: string | null } = {}): ProxyHost => ({
  osRelease: () => release,
  hasIPv6: () => false,
  env,
  nftPath: () => nft ?? undefined,
  nftWorks: () => Promise.resolve(o.nftWorks ?? true),
  iptablesPath: () => (o.ipt === undefined ? '/usr/sbin/iptables-restore' : (o.ipt ?? undefined)),
});
const client = new FakeApiClient() as unknown as HttpApiClient;
const msgs = (lines: Record<string, unknown>[]) => lines.map((l) => `${String(l.msg)} ${typeof l.error === 'string' ? l.error : ''}`.trim());

test('proxy.mode disabled: not started, and said so', async (t) => {
  const { ctx, lines } = await context('containerRuntimeEndpoint: unix:///run/c.sock\nproxy:\n  mode: disabled\n');
  t.is(await planProxy(ctx, host('6.1.0')), undefined);
  t.is(ctx.running.loops.length, 0);
  t.true(msgs(lines).includes('network proxy disabled (proxy.mode: disabled)'));
});

test('the CRI simulator: not started (its pods have no network, and the host\'s rules stay untouched)', async (t) => {
  const { ctx, lines } = await context('containerRuntimeEndpoint: sim://\n');
  t.is(await planProxy(ctx, host('6.1.0')), undefined);
  t.is(ctx.running.loops.length, 0);
  t.regex(msgs(lines).join('\n'), /network proxy not started: the CRI simulator/);
});

test('proxy.mode nftables on a kernel older than 5.13: a configuration error naming the file and the field, with upstream\'s message; with the skip option 5.4 is the floor', async (t) => {
  const { ctx } = await context('containerRuntimeEndpoint: unix:///run/c.sock\nproxy:\n  mode: nftables\n');
  const e = await t.throwsAsync(planProxy(ctx, host('5.10.0-28-amd64')), { instanceOf: ConfigError });
  t.regex(e.message, /^\/c\.yaml: field proxy\.mode: "nftables" cannot run on this node: kube-proxy in nftables mode requires kernel 5\.13 or later \(this kernel is 5\.10\.0-28-amd64\); set proxy\.mode: iptables/);
  t.is(ctx.running.loops.length, 0);
  const old = await context('containerRuntimeEndpoint: unix:///run/c.sock\nproxy:\n  mode: nftables\n  skipKernelVersionCheck: true\n');
  const e2 = await t.throwsAsync(planProxy(old.ctx, host('5.3.0')), { instanceOf: ConfigError }, 'below 5.4 even with the skip option');
  t.regex(e2.message, /requires kernel 5\.4 or later/);
  t.is(await chooseProxyMode(old.ctx, host('5.4.0')), 'nftables', '5.4 with the skip option');
});

test('proxy.mode nftables without a working nft, proxy.mode iptables without iptables-restore: configuration errors saying what is missing', async (t) => {
  const { ctx } = await context('containerRuntimeEndpoint: unix:///run/c.sock\nproxy:\n  mode: nftables\n');
  const e = await t.throwsAsync(planProxy(ctx, host('6.1.0', {}, null)), { instanceOf: ConfigError });
  t.regex(e.message, /field proxy\.mode: .*no nft binary .*install nftables/);
  const broken = await t.throwsAsync(chooseProxyMode(ctx, host('6.1.0', {}, '/usr/sbin/nft', { nftWorks: false })), { instanceOf: ConfigError });
  t.regex(broken.message, /\/usr\/sbin\/nft cannot reach the kernel's nftables/);
  const ipt = await context('containerRuntimeEndpoint: unix:///run/c.sock\nproxy:\n  mode: iptables\n');
  const e2 = await t.throwsAsync(planProxy(ipt.ctx, host('6.1.0', {}, '/usr/sbin/nft', { ipt: null })), { instanceOf: ConfigError });
  t.regex(e2.message, /^\/c\.yaml: field proxy\.mode: "iptables" cannot run on this node: no iptables-restore .*install iptables/);
  t.is(ctx.running.loops.length + ipt.ctx.running.loops.length, 0);
});

test('an explicit mode is honoured where it can run: iptables on a new kernel, nftables on 5.13', async (t) => {
  const ipt = await context('containerRuntimeEndpoint: unix:///run/c.sock\nproxy:\n  mode: iptables\n');
  t.is(await chooseProxyMode(ipt.ctx, host('6.1.0')), 'iptables');
  const nft = await context('containerRuntimeEndpoint: unix:///run/c.sock\nproxy:\n  mode: nftables\n');
  t.is(await chooseProxyMode(nft.ctx, host('5.13.0')), 'nftables');
});

test('proxy.mode unset: nftables when the kernel allows it and nft works, else iptables, the choice logged with why', async (t) => {
  const unset = 'containerRuntimeEndpoint: unix:///run/c.sock\n';
  const a = await context(unset);
  t.is(await chooseProxyMode(a.ctx, host('6.1.0')), 'nftables');
  t.true(msgs(a.lines).includes('proxy.mode unset: nftables chosen (the kernel allows it and nft works)'));
  const b = await context(unset);
  t.is(await chooseProxyMode(b.ctx, host('5.10.0-28-amd64')), 'iptables');
  const line = b.lines.find((l) => l.msg === 'proxy.mode unset: iptables chosen, as nftables cannot run here');
  t.regex(String(line?.why), /requires kernel 5\.13 or later/);
  const c = await context(unset);
  t.is(await chooseProxyMode(c.ctx, host('6.1.0', {}, '/usr/sbin/nft', { nftWorks: false })), 'iptables', 'nft present but refused by the kernel');
  const d = await context(unset);
  t.is(await chooseProxyMode(d.ctx, host('6.1.0', {}, null)), 'iptables', 'no nft');
});

test('proxy.mode unset and neither nft nor iptables: not started, saying what to install', async (t) => {
  const { ctx, lines } = await context('containerRuntimeEndpoint: unix:///run/c.sock\n');
  t.is(await planProxy(ctx, host('6.1.0', {}, null, { ipt: null })), undefined);
  t.is(ctx.running.loops.length, 0);
  t.regex(msgs(lines).join('\n'), /network proxy not started: neither nftables nor iptables .*install nftables.*install iptables/);
});

test('the metrics carry upstream\'s names', async (t) => {
  const registry = new Registry();
  proxyMetrics(registry).synced(0.02, false, 1_700_000_000_000);
  const text = await registry.metrics();
  t.regex(text, /kubeproxy_sync_proxy_rules_duration_seconds_count 1/);
  t.regex(text, /kubeproxy_sync_partial_proxy_rules_duration_seconds_count 1/);
  t.regex(text, /kubeproxy_sync_full_proxy_rules_duration_seconds_count 0/);
  t.regex(text, /kubeproxy_sync_proxy_rules_last_timestamp_seconds 1700000000/);
});

test('the other mode\'s rules are removed before the proxy runs; a failure there is logged and the proxy runs anyway', async (t) => {
  const calls: string[] = [];
  const other = (fail: boolean) => ({ sync: () => Promise.reject(new Error('unused')), reset: () => undefined, cleanUp: () => (calls.push('cleanUp other'), fail ? Promise.reject(new Error('nft: Operation not permitted')) : Promise.resolve()) });
  const { ctx, lines } = await context('containerRuntimeEndpoint: unix:///run/c.sock\n');
  await runAfterLeftovers(other(false), ctx.log, () => Promise.resolve(void calls.push('run')));
  await runAfterLeftovers(other(true), ctx.log, () => Promise.resolve(void calls.push('run')));
  await runAfterLeftovers(undefined, ctx.log, () => Promise.resolve(void calls.push('run')));
  t.deepEqual(calls, ['cleanUp other', 'run', 'cleanUp other', 'run', 'run']);
  t.is(lines.filter((l) => l.msg === 'removing the other proxy mode\'s rules failed').length, 1);
});

test('a plan runs: startProxy drives the planned writer (the other mode\'s leftovers removed first) until the agent stops; no plan, no proxy', async (t) => {
  const { ctx } = await context('containerRuntimeEndpoint: unix:///run/c.sock\n');
  const ac = new AbortController();
  const agent = { ...ctx, signal: ac.signal };
  const calls: string[] = [];
  const writer = (name: string) => ({
    sync: () => (calls.push(`${name} sync`), Promise.resolve({ full: true, bytes: 0 })),
    reset: () => void calls.push(`${name} reset`),
    cleanUp: () => (calls.push(`${name} cleanUp`), Promise.resolve()),
  });
  t.is(startProxy(agent, client, undefined), undefined);
  const proxier = startProxy(agent, client, { mode: 'iptables', families: ['ip'], writer: writer('ipt'), other: writer('nft') });
  t.truthy(proxier);
  t.is(agent.running.loops.length, 1);
  // The informers list the fake API's (empty) Services and slices, then the first sync runs.
  for (let i = 0; i < 1000 && proxier!.syncCount() === 0; i++) await new Promise((r) => setImmediate(r));
  ac.abort();
  await Promise.all(agent.running.loops);
  t.deepEqual(calls, ['nft cleanUp', 'ipt sync', 'ipt cleanUp']);
});
