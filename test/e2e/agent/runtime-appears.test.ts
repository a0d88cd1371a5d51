/**
 * Issue 10, bad input "a missing container runtime at first start": a real agent started before
 * its runtime socket exists registers the node NotReady with the runtime as the reason, keeps
 * running, and turns Ready by itself once a CRI runtime (the simulator served over real gRPC on
 * that socket) appears. docs/troubleshooting.md quotes the reason.
 */
import test from 'ava';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveRuntimeService, type CriServer } from '../../../agent/cri/sim-server';
import { Simulator } from '../../../agent/cri/simulator';
import { startApiServer } from '../../helpers/apiserver-process';
import { freePort } from '../../helpers/free-port';
import { eventually, kubectlJson, startAgent } from './agent-process';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

test('an agent started before its container runtime reports NotReady with the reason and recovers when the runtime appears', async (t) => {
  const api = await startApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-late-runtime-'));
  const socket = join(dir, 'run', 'containerd.sock');
  const name = 'e2e-late-runtime';
  const agent = startAgent({
    dir,
    nodeName: name,
    kubeconfig: api.kubeconfig,
    configLines: [`containerRuntimeEndpoint: unix://${socket}`],
    args: [`--port=${await freePort()}`],
  });
  let server: CriServer | undefined;
  const ready = async () => {
    const n = await kubectlJson(api.kubeconfig, ['get', 'node', name]);
    return { node: n, ready: (n['status']?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Ready') };
  };
  try {
    const notReady = await eventually('the node registered NotReady', async () => {
      const r = await ready();
      return r.ready?.status === 'False' ? r.ready : undefined;
    }, 60_000);
    t.is(notReady.reason, 'KubeletNotReady');
    t.regex(notReady.message ?? '', /container runtime: container runtime status check may not have completed yet/);
    t.false(existsSync(socket));
    t.is(agent.proc.exitCode, null, 'the agent keeps running without a runtime');
    await agent.waitForLog('container runtime not available yet', 60_000);

    // containerd creates its socket's directory when it starts; so does this stand-in.
    mkdirSync(join(dir, 'run'));
    server = await serveRuntimeService(new Simulator({ root: join(dir, 'sim') }), socket);
    const recovered = await eventually('the node Ready once the runtime answers', async () => {
      const r = await ready();
      return r.ready?.status === 'True' ? r : undefined;
    }, 60_000);
    t.is(recovered.ready!.reason, 'KubeletReady');
    t.not(recovered.node['status'].nodeInfo.containerRuntimeVersion, 'unknown://');
    t.is(agent.proc.exitCode, null, 'recovered without a restart');
    t.is(await agent.stop('SIGTERM'), 0, agent.output());
  } finally {
    await agent.stop('SIGKILL');
    await server?.close();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
