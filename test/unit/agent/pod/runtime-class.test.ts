/**
 * runtimeClassName reaches the CRI as the RuntimeClass's handler (RunPodSandboxRequest
 * runtime_handler), as upstream's kubelet resolves it; a class that cannot be resolved, or a
 * handler the runtime lacks, leaves the pod's containers waiting with the reason.
 */
import test from 'ava';
import { runtimeClassesResource } from '../../../../agent/pod/runtime-classes';
import { isRunningReady, startHarness, waitingReason } from './harness';

const rc = (name: string, handler: string) => ({ apiVersion: 'node.svc.io/v1', kind: 'RuntimeClass', metadata: { name }, handler });
const container = [{ name: 'c', image: 'svc.local/busybox:latest' }];

test('the sandbox runs with the class\'s handler, not the class name', async (t) => {
  const h = await startHarness();
  try {
    h.api.seed(runtimeClassesResource, rc('fast', 'runc'));
    const pod = h.createPod('with-class', { runtimeClassName: 'fast', containers: container });
    t.true(await h.until(() => isRunningReady(h.status('with-class'))));
    const sandboxes = (await h.sim.listPodSandbox()).filter((s) => s.metadata?.uid === pod.metadata.uid);
    t.deepEqual(sandboxes.map((s) => s.runtimeHandler), ['runc']);
    h.createPod('no-class', { containers: container });
    t.true(await h.until(() => isRunningReady(h.status('no-class'))));
  } finally {
    await h.stop();
  }
});

test('an unknown class or a handler the runtime lacks: containers wait with the reason', async (t) => {
  const h = await startHarness();
  try {
    h.api.seed(runtimeClassesResource, rc('kata', 'kata'));
    h.createPod('missing', { runtimeClassName: 'nope', containers: container });
    h.createPod('kata', { runtimeClassName: 'kata', containers: container });
    const message = (name: string) => h.status(name)?.containerStatuses?.[0]?.state.waiting?.message ?? '';
    t.true(await h.until(() => message('missing') !== '' && message('kata') !== ''));
    t.is(waitingReason(h.status('missing'), 'c'), 'ContainerCreating');
    t.is(message('missing'), 'Failed to create pod sandbox: runtimeclass.node.k8s.io "nope" not found');
    t.regex(message('kata'), /^Failed to create pod sandbox: .*no runtime for "kata" is configured/);
    t.is((await h.sim.listPodSandbox()).length, 0);
  } finally {
    await h.stop();
  }
});
