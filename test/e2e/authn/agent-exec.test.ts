import test from 'ava';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { startApiServer } from '../../helpers/apiserver-process';
import { eventually, startAgent } from '../agent/agent-process';

// A real svc-node (sim:// runtime) authenticating to a real svc-apiserver with a kubeconfig whose
// user is an exec credential plugin (spec 5.8): the plugin prints a token of a static token-file
// user system:node:<name> in system:nodes; its first answer is a token the server does not know,
// so the agent must drop it on the 401, run the plugin again and go on with the good one.

const PLUGIN = resolve(__dirname, '../../../../test/fixtures/exec-plugin/credential-plugin.js');
const NODE = 'exec-node-1';
const GOOD = 'exec-node-token-3f9a1c7e5b2d4a60';

type Node = { status: { conditions: { type: string; status: string }[] } };

test('svc-node registers Ready with a token from an exec plugin, re-running the plugin after a 401', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-exec-'));
  writeFileSync(join(dir, 'tokens.csv'), `${GOOD},system:node:${NODE},uid-${NODE},"system:nodes"\n`, { mode: 0o600 });
  const api = await startApiServer({ args: [`--token-auth-file=${join(dir, 'tokens.csv')}`] });
  const state = join(dir, 'plugin');
  mkdirSync(state);
  writeFileSync(join(state, 'reply.json'), JSON.stringify({ tokens: ['unknown-token', GOOD], expirationTimestamp: '2099-01-01T00:00:00Z' }));
  const kubeconfig = join(dir, 'node.kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'node',
      contexts: [{ name: 'node', context: { cluster: 'svc', user: 'node' } }],
      clusters: [{ name: 'svc', cluster: { server: api.url, 'certificate-authority-data': Buffer.from(api.caPem).toString('base64') } }],
      users: [
        {
          name: 'node',
          user: {
            exec: {
              apiVersion: 'client.authentication.svc.io/v1',
              command: PLUGIN,
              env: [{ name: 'PLUGIN_DIR', value: state }],
              interactiveMode: 'IfAvailable',
              provideClusterInfo: true,
            },
          },
        },
      ],
    }),
    { mode: 0o600 },
  );
  const agent = startAgent({ dir: join(dir, 'agent'), nodeName: NODE, kubeconfig });
  try {
    await agent.waitForLog('node registered and heartbeating', 60_000);
    const node = await eventually('node Ready', async () => {
      const res = await request(`${api.url}/api/v1/nodes/${NODE}`, { dispatcher: api.admin });
      const n = (await res.body.json()) as Node;
      return res.statusCode === 200 && n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? n : undefined;
    });
    t.truthy(node);
    // The stale token cost exactly one extra run; the good one is cached (it expires in 2099).
    const runs = readFileSync(join(state, 'runs'), 'utf8').trim().split('\n').length;
    t.is(runs, 2);
    const info = JSON.parse(readFileSync(join(state, 'info.json'), 'utf8'));
    t.is(info.spec.interactive, false);
    t.is(info.spec.cluster.server, api.url);
    // The Lease is renewed under the plugin's identity too.
    const lease = await eventually('the node Lease', async () => {
      const res = await request(`${api.url}/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/${NODE}`, { dispatcher: api.admin });
      const l = (await res.body.json()) as { spec?: { holderIdentity?: string } };
      return res.statusCode === 200 ? l : undefined;
    });
    t.is(lease.spec?.holderIdentity, NODE);
    t.is(await agent.stop('SIGTERM'), 0);
  } finally {
    await agent.stop('SIGKILL');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
