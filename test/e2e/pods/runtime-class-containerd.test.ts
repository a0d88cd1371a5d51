/**
 * RuntimeClass on real containerd (issue 20, item 4): the test's own containerd, whose config names
 * one runtime, runc (test/helpers/containerd.ts). A pod of a RuntimeClass with handler runc runs
 * (the handler reached RunPodSandboxRequest.runtime_handler and containerd knew it); a class whose
 * handler containerd lacks leaves the pod Pending with containerd's own error in a
 * FailedCreatePodSandBox event.
 */
import test from 'ava';
import { requireContainerdTools } from '../../helpers/containerd';
import { startContainerdNode, type ContainerdNode } from '../../helpers/containerd-node';
import { kubectl } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

const IMAGE = 'svc.local/busybox:latest';

test('a RuntimeClass handler reaches containerd: runc runs, an unknown handler is containerd\'s error', async (t) => {
  t.timeout(240_000);
  requireContainerdTools();
  const node: ContainerdNode = await startContainerdNode({ nodeName: 'e2e-runtimeclass' });
  t.teardown(async () => {
    await kubectl(node.api.kubeconfig, ['delete', 'pod', '--all', '--grace-period=0', '--force', '--wait=false']);
    await node.stop();
  });
  const k = (args: string[], input?: string) => kubectl(node.api.kubeconfig, args, { timeoutMs: 30_000, ...(input !== undefined ? { input } : {}) });
  const manifest = `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: standard}
handler: runc
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
---
apiVersion: v1
kind: Pod
metadata: {name: on-runc}
spec:
  runtimeClassName: standard
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: "${IMAGE}", imagePullPolicy: Never, command: [sleep, "3600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: on-kata}
spec:
  runtimeClassName: kata
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: "${IMAGE}", imagePullPolicy: Never, command: [sleep, "3600"]}
`;
  const created = await k(['create', '-f', '-'], manifest);
  t.is(created.code, 0, created.stderr);
  const phase = async (name: string) => (await k(['get', 'pod', name, '-o', 'jsonpath={.status.phase}'])).stdout;
  await eventually('on-runc Running', async () => ((await phase('on-runc')) === 'Running' ? true : undefined), 120_000);
  const failed = await eventually(
    'on-kata sandbox refused',
    async () => {
      const r = await k(['get', 'events', '--field-selector', 'involvedObject.name=on-kata,reason=FailedCreatePodSandBox', '-o', 'jsonpath={.items[0].message}']);
      return r.stdout || undefined;
    },
    120_000,
  );
  t.regex(failed, /no runtime for "kata" is configured/);
  t.is(await phase('on-kata'), 'Pending');
});
