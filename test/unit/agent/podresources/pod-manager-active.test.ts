/**
 * PodManager.activePods (what the pod resources List shows) on the pod harness: running pods are
 * active; a pod that ended (Succeeded/Failed) is not; a deleted pod leaves once it is finished;
 * Get (podByName) still finds an ended pod while its worker exists.
 */
import test from 'ava';
import { PodManagerPods } from '../../../../agent/podresources/pod-manager-pods';
import { BUSYBOX, isRunningReady, startHarness } from '../pod/harness';

test('active pods: running ones in, ended and deleted ones out', async (t) => {
  const h = await startHarness({ sim: { behaviours: [{ podName: 'done', exitAfterMs: 500, exitCode: 0 }] } });
  try {
    const provider = new PodManagerPods(h.mgr);
    const names = () => provider.activePods().map((p) => p.name).sort();
    h.createPod('web', { containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sleep'], args: ['3600'] }] });
    h.createPod('gone', { terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sleep'], args: ['3600'] }] });
    h.createPod('done', { restartPolicy: 'Never', containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent' }] });
    t.true(await h.until(() => isRunningReady(h.status('web')) && isRunningReady(h.status('gone')) && h.status('done')?.phase === 'Succeeded'));
    t.deepEqual(names(), ['gone', 'web']);
    t.deepEqual(provider.podByName('default', 'web')?.containers, ['app']);
    t.is(provider.podByName('default', 'done')?.name, 'done', 'Get finds an ended pod the agent still knows');
    h.deletePod('gone', 1);
    t.true(await h.until(() => !names().includes('gone'), 60_000));
    t.deepEqual(names(), ['web']);
  } finally {
    await h.stop();
  }
});
