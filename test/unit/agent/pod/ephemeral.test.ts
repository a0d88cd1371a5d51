/**
 * Ephemeral containers on the simulator: added to a running pod (as the pods/ephemeralcontainers
 * sub-resource does), each is started once in the pod's sandbox, joins its target container's PID
 * namespace (pid TARGET with the target's ID), reports in ephemeralContainerStatuses (never
 * ready), is never restarted after it exits, and does not disturb the pod's own containers.
 */
import test from 'ava';
import { podsResource } from '../../../../agent/pod/config-objects';
import type { Pod } from '../../../../agent/api/core-v1';
import { BUSYBOX, isRunningReady, startHarness } from './harness';

test('an ephemeral container is started once next to the running app, shares the target PID namespace, and is not restarted after it exits', async (t) => {
  const h = await startHarness({ sim: { behaviours: [{ name: 'debugger', exitAfterMs: 3000, exitCode: 1 }] } });
  try {
    const pod = h.createPod('web', { containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] });
    const uid = pod.metadata.uid!;
    t.true(await h.until(() => isRunningReady(h.status('web'))));
    const appId = (await h.containers(uid)).find((c) => c.metadata.name === 'app')!.id;
    h.api.mutate(podsResource, 'web', 'default', (o) => {
      (o as Pod).spec.ephemeralContainers = [
        { name: 'debugger', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sh'], stdin: true, tty: true, targetContainerName: 'app' } as never,
      ];
    });
    t.true(await h.until(() => h.status('web')?.ephemeralContainerStatuses?.[0]?.state.running !== undefined));
    const st = h.status('web')!;
    const eph = st.ephemeralContainerStatuses![0];
    t.is(eph.name, 'debugger');
    t.false(eph.ready);
    t.is(eph.restartCount, 0);
    const cfg = h.sim.lastConfig('debugger')!;
    t.is(cfg.linux?.securityContext?.namespaceOptions?.pid, 'TARGET');
    t.is(cfg.linux?.securityContext?.namespaceOptions?.targetId, appId);
    // The pod is still Running and Ready; the app was not restarted.
    t.true(isRunningReady(st));
    t.is(st.containerStatuses![0].restartCount, 0);

    // It exits after 3 s: terminated, and never started again (restartPolicy Always does not apply).
    t.true(await h.until(() => h.status('web')?.ephemeralContainerStatuses?.[0]?.state.terminated !== undefined));
    await h.clock.advance(60_000);
    const after = h.status('web')!;
    t.is(after.ephemeralContainerStatuses![0].state.terminated?.exitCode, 1);
    t.is(after.ephemeralContainerStatuses![0].restartCount, 0);
    t.is((await h.containers(uid)).filter((c) => c.metadata.name === 'debugger').length, 1);
    t.true(isRunningReady(after));
  } finally {
    await h.stop();
  }
});

test('an ephemeral container whose target is not running waits with CreateContainerError; without a target it shares the pod namespace settings', async (t) => {
  const h = await startHarness();
  try {
    h.createPod('p', { containers: [{ name: 'app', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] });
    t.true(await h.until(() => isRunningReady(h.status('p'))));
    h.api.mutate(podsResource, 'p', 'default', (o) => {
      (o as Pod).spec.ephemeralContainers = [
        { name: 'ghost-target', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sh'], targetContainerName: 'nope' } as never,
        { name: 'plain', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', command: ['sh'] } as never,
      ];
    });
    t.true(await h.until(() => (h.status('p')?.ephemeralContainerStatuses ?? []).some((s) => s.name === 'plain' && s.state.running)));
    const ghost = h.status('p')!.ephemeralContainerStatuses!.find((s) => s.name === 'ghost-target')!;
    t.is(ghost.state.waiting?.reason, 'CreateContainerError');
    t.regex(ghost.state.waiting?.message ?? '', /target container "nope" is not running/);
    t.not(h.sim.lastConfig('plain')?.linux?.securityContext?.namespaceOptions?.pid, 'TARGET');
  } finally {
    await h.stop();
  }
});
