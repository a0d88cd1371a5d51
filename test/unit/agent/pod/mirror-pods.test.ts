/** Mirror pods carry the Node's owner reference with its uid, so none is created before the Node is registered. */
import test from 'ava';
import { podsResource } from '../../../../agent/pod/config-objects';
import { MirrorPods } from '../../../../agent/pod/mirror-pods';
import type { Pod } from '../../../../agent/api/core-v1';
import { staticPodFromManifest } from '../../../../agent/pod/static-pod-source';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { MemLog } from '../node/fakes/mem-log';

const NODE = 'node-1';

test('no mirror pod while the Node uid is unknown; then one controlled by the Node', async (t) => {
  const client = new FakeApiClient();
  let uid: string | undefined;
  const mirrors = new MirrorPods({ client, nodeName: NODE, nodeUid: () => uid, log: new MemLog() });
  const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
  const web = staticPodFromManifest(manifest, '/etc/pods/web.json', NODE);
  t.is(await mirrors.reconcile([web], []), 0);
  t.is(client.peek<Pod>(podsResource, 'web-node-1', 'default'), undefined, 'NodeRestriction would refuse it without the owner reference');
  uid = 'node-uid-7';
  t.is(await mirrors.reconcile([web], []), 1);
  const m = client.peek<Pod>(podsResource, 'web-node-1', 'default')!;
  t.deepEqual(m.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: 'node-uid-7', controller: true }]);
  t.is(m.spec.serviceAccountName, undefined, 'a mirror pod names no service account');
});
