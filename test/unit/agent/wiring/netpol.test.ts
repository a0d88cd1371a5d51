/** When svc-node enforces NetworkPolicies: on by default, off when switched off or on the CRI simulator. */
import test from 'ava';
import pino from 'pino';
import { loadAgentConfig, type ConfigEnv } from '../../../../agent/config/load';
import { AgentMetrics } from '../../../../agent/metrics/agent-metrics';
import { HeartbeatHealth } from '../../../../agent/node/heartbeat-health';
import { realClock } from '../../../../agent/platform/clock';
import type { AgentContext } from '../../../../agent/wiring/context';
import { startNetworkPolicy } from '../../../../agent/wiring/netpol';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import type { HttpApiClient } from '../../../../agent/client/http-api-client';

const head = 'kind: NodeAgentConfiguration\napiVersion: nodeagent.config.svc.io/v1beta1\n';
const env = (yaml: string): ConfigEnv => ({
  readFile: (p) => (p === '/c.yaml' ? Promise.resolve(head + yaml) : Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }))),
  readdir: () => Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' })),
  hostname: () => 'n1',
  cwd: '/',
});

async function context(yaml: string) {
  const cfg = await loadAgentConfig(['--config', '/c.yaml'], env(yaml));
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(String((JSON.parse(s) as { msg: unknown }).msg)) });
  const ac = new AbortController();
  const ctx: AgentContext = {
    cfg,
    log,
    notifier: { ready: () => undefined, status: () => undefined, stopping: () => undefined, watchdog: () => undefined } as unknown as AgentContext['notifier'],
    signal: ac.signal,
    clock: realClock,
    running: { loops: [], clients: [] },
    health: new HeartbeatHealth({ requestTimeoutMs: 1000 }),
    metrics: new AgentMetrics(),
  };
  return { ctx, lines, ac };
}

const client = new FakeApiClient() as unknown as HttpApiClient;

test('networkPolicy.mode disabled: not started, and said so', async (t) => {
  const { ctx, lines } = await context('containerRuntimeEndpoint: unix:///run/c.sock\nnetworkPolicy:\n  mode: disabled\n');
  t.is(startNetworkPolicy(ctx, client), undefined);
  t.is(ctx.running.loops.length, 0);
  t.true(lines.includes('network policy enforcement disabled (networkPolicy.mode: disabled)'));
});

test('the CRI simulator: not started', async (t) => {
  const { ctx, lines } = await context('containerRuntimeEndpoint: sim://\n');
  t.is(startNetworkPolicy(ctx, client), undefined);
  t.is(ctx.running.loops.length, 0);
  t.true(lines.some((l) => l.startsWith('network policy enforcement not started: the CRI simulator')));
});

test('by default: started as a loop', async (t) => {
  const { ctx, lines, ac } = await context('containerRuntimeEndpoint: unix:///run/c.sock\n');
  t.truthy(startNetworkPolicy(ctx, client));
  t.is(ctx.running.loops.length, 1);
  t.true(lines.includes('network policy enforcement started'));
  ac.abort();
});
