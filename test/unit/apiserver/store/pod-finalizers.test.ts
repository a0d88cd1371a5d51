import test from 'ava';
import { isNotFound } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { adminCtx, openFixture } from '../controllers/store-fixture';

/**
 * Upstream's ShouldDeleteDuringUpdate: an update that takes the last finalizer off a terminating
 * pod removes it only once its grace period is 0 (the node agent's final delete); a pod still in
 * its graceful termination stays for the agent to finish (the Job controller removes its tracking
 * finalizer from running pods it has just deleted).
 */
test('regression: taking the last finalizer off a pod in graceful termination leaves it for the node; at grace 0 it goes', async (t) => {
  const f = await openFixture();
  t.teardown(() => f.close());
  const pods = f.type('', 'v1', 'pods');
  const pod: KObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', finalizers: ['batch.kubernetes.io/job-tracking'] },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
  };
  const dropFinalizers = () => f.store.update(pods, 'default', 'p', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [], resourceVersion: undefined } }), adminCtx);
  await f.store.create(pods, 'default', pod, adminCtx);
  const deleting = await f.store.delete(pods, 'default', 'p', {}, adminCtx);
  t.false(deleting.gone);
  await dropFinalizers();
  const still = await f.store.get(pods, 'default', 'p');
  t.is(still.metadata.deletionGracePeriodSeconds, 30);
  // The agent's final delete: with no finalizer left the pod goes at once.
  t.true((await f.store.delete(pods, 'default', 'p', { gracePeriodSeconds: 0 }, adminCtx)).gone);

  // At grace 0 with a finalizer, the pod waits for it; removing it removes the pod.
  await f.store.create(pods, 'default', pod, adminCtx);
  t.false((await f.store.delete(pods, 'default', 'p', { gracePeriodSeconds: 0 }, adminCtx)).gone);
  await dropFinalizers();
  const gone = await f.store.get(pods, 'default', 'p').catch((e: unknown) => e);
  t.true(isNotFound(gone));
});
