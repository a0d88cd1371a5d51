/**
 * Resource metrics from a real runtime: svc-node on the test's own containerd
 * (test/helpers/containerd.ts) reads ListContainerStats and the node's /proc; `kubectl top pod
 * --containers` on a busybox pod and `kubectl top node` show them through the API server's bundled
 * metrics server.
 */
import test from 'ava';
import { requireContainerdTools } from '../../helpers/containerd';
import { startContainerdNode } from '../../helpers/containerd-node';
import { kubectl } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

test('kubectl top pod --containers and top node on containerd', async (t) => {
  t.timeout(240_000);
  requireContainerdTools();
  const node = await startContainerdNode({ nodeName: 'e2e-top', apiArgs: ['--metric-resolution=2s'] });
  t.teardown(async () => {
    await kubectl(node.api.kubeconfig, ['delete', 'pod', 'busy', '--ignore-not-found', '--wait=false']);
    await node.stop();
  });
  const manifest = `apiVersion: v1
kind: Pod
metadata: {name: busy}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: "svc.local/busybox:latest", imagePullPolicy: Never, command: [sleep, "3600"]}
`;
  const applied = await kubectl(node.api.kubeconfig, ['apply', '-f', '-'], { input: manifest });
  t.is(applied.code, 0, applied.stderr);
  const ready = await kubectl(node.api.kubeconfig, ['wait', '--for=condition=Ready', 'pod/busy', '--timeout=120s'], { timeoutMs: 130_000 });
  t.is(ready.code, 0, `${ready.stderr}\n${node.agent.output().slice(-3000)}`);
  const pods = await eventually('kubectl top pod', async () => {
    const r = await kubectl(node.api.kubeconfig, ['top', 'pod', 'busy', '--containers', '--no-headers']);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  }, 90_000, 1000);
  // sleep uses next to no CPU; its working set is some KiB or MiB.
  t.regex(pods, /^busy\s+app\s+\d+m\s+\d+Mi\s*$/m);
  const nodes = await eventually('kubectl top node', async () => {
    const r = await kubectl(node.api.kubeconfig, ['top', 'node', '--no-headers']);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  }, 30_000, 1000);
  t.regex(nodes, /^e2e-top\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%/m);
});
