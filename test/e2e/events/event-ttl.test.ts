/**
 * --event-ttl end to end: an event expires its TTL after its last write, written through either
 * API; and an event whose TTL passed while svc-apiserver was killed (SIGKILL) is removed once it
 * is back, as upstream's etcd leases would have removed it meanwhile (the exact timing across a
 * restart is pinned by test/unit/apiserver/controllers/event-ttl.test.ts with a fake clock).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startApiServer } from '../../helpers/apiserver-process';
import { kubectl } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

const TTL = ['--event-ttl=3s', '--leader-elect=false'];

function event(name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
    reason: 'Testing',
    message: 'expires',
    type: 'Normal',
    source: { component: 'e2e' },
  });
}

async function exists(kubeconfig: string, name: string, resource = 'events'): Promise<boolean> {
  const r = await kubectl(kubeconfig, ['get', resource, name, '-o', 'name']);
  if (r.code === 0) return true;
  if (/NotFound|not found/.test(r.stderr)) return false;
  throw new Error(`kubectl get ${resource} ${name}: ${r.stderr}`);
}

test('an event is removed after --event-ttl, also when the TTL passed while svc-apiserver was killed', async (t) => {
  // The test owns the data dir, so that the kill keeps the store for the restart.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-event-ttl-'));
  let api = await startApiServer({ args: TTL, dataDir });
  try {
    const created = await kubectl(api.kubeconfig, ['create', '-f', '-'], { input: event('live') });
    t.is(created.code, 0, created.stderr);
    t.true(await exists(api.kubeconfig, 'live'));
    t.true(await exists(api.kubeconfig, 'live', 'events.v1.events.k8s.io'), 'the same event through events.k8s.io');
    await eventually('the event expires', async () => ((await exists(api.kubeconfig, 'live')) ? undefined : true), 30_000);

    t.is((await kubectl(api.kubeconfig, ['create', '-f', '-'], { input: event('orphan') })).code, 0);
    t.true(await exists(api.kubeconfig, 'orphan'));
    await api.stop('SIGKILL');
    // Restarted on the same store; by the time it serves, the event's 3 s have passed.
    api = await startApiServer({ args: TTL, dataDir });
    await eventually('the event that expired while the server was down goes', async () => ((await exists(api.kubeconfig, 'orphan')) ? undefined : true), 30_000);
  } finally {
    await api.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
