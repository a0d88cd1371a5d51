/** When svc-node does not start its network proxy: switched off, the CRI simulator, a kernel the nftables mode refuses. */
import test from 'ava';
import pino from 'pino';
import { Registry } from 'prom-client';
import { loadAgentConfig, type ConfigEnv } from '../../../../agent/config/load';
import { AgentMetrics } from '../../../../agent/metrics/agent-metrics';
import { HeartbeatHealth } from '../../../../agent/node/heartbeat-health';
import { realClock } from '../../../../agent/platform/clock';
import { proxyMetrics } from '../../../../agent/proxy/proxy-metrics';
import type { AgentContext } from '../../../../agent/wiring/context';
import { startProxy, type ProxyHost } from '../../../../agent/wiring/proxy';
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

// nft: null for a system without the binary (undefined would take the default).
const host = (release: string, env: NodeJS.ProcessEnv = {}, nft: string | null = '/usr/sbin/nft'): ProxyHost => ({ osRelease: () => release, hasIPv6: () => false, env, nftPath: () => nft ?? undefined });
const client = new FakeApiClient() as unknown as HttpApiClient;
const msgs = (lines: Record<string, unknown>[]) => lines.map((l) => `${String(l.msg)} ${typeof l.error === 'string' ? l.error : ''}`.trim());

test('proxy.mode disabled: not started, and said so', async (t) => {
  const { ctx, lines } = await context('containerRuntimeEndpoint: unix:///run/c.sock\nproxy:\n  mode: disabled\n');
  t.is(startProxy(ctx, client, host('6.1.0')), undefined);
  t.is(ctx.running.loops.length, 0);
  t.true(msgs(lines).includes('network proxy disabled (proxy.mode: disabled)'));
});

test('the CRI simulator: not started (its pods have no network, and the host\'s rules stay untouched)', async (t) => {
  const { ctx, lines } = await context('containerRuntimeEndpoint: sim://\n');
  t.is(startProxy(ctx, client, host('6.1.0')), undefined);
  t.is(ctx.running.loops.length, 0);
  t.regex(msgs(lines).join('\n'), /network proxy not started: the CRI simulator/);
});

test('a kernel older than 5.13: not started, with upstream\'s message; with the skip option 5.4 is the floor', async (t) => {
  const { ctx, lines } = await context('containerRuntimeEndpoint: unix:///run/c.sock\n');
  t.is(startProxy(ctx, client, host('5.10.0-28-amd64')), undefined);
  t.is(ctx.running.loops.length, 0);
  t.true(msgs(lines).some((m) => m.startsWith('network proxy not started; set proxy.mode: disabled if this node does not need it kube-proxy in nftables mode requires kernel 5.13 or later')));
  const old = await context('containerRuntimeEndpoint: unix:///run/c.sock\nproxy:\n  skipKernelVersionCheck: true\n');
  t.is(startProxy(old.ctx, client, host('5.3.0')), undefined, 'below 5.4 even with the skip option');
  t.true(msgs(old.lines).some((m) => m.includes('requires kernel 5.4 or later')));
});

test('no nft on the system: not started, saying what to install', async (t) => {
  const { ctx, lines } = await context('containerRuntimeEndpoint: unix:///run/c.sock\n');
  t.is(startProxy(ctx, client, host('6.1.0', {}, null)), undefined);
  t.is(ctx.running.loops.length, 0);
  t.regex(msgs(lines).join('\n'), /network proxy not started: no nft binary .*install nftables/);
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
