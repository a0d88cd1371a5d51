/** The merged pod sources: held-back changes, API and static sets, mirror pods and where a pod's status goes. */
import test from 'ava';
import { podsResource } from '../../../../agent/pod/config-objects';
import { PodSources } from '../../../../agent/pod/pod-sources';
import type { Pod } from '../../../../agent/api/core-v1';
import { CONFIG_HASH, staticPodFromManifest } from '../../../../agent/pod/static-pod-source';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';
import { MIRROR_POD_ANNOTATION } from '../../../../apiserver/api/well-known';

const NODE = 'node-1';

function apiPod(name: string, o: { phase?: string; created?: string; mirrorOf?: string; uid?: string } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: 'default',
      uid: o.uid ?? `uid-${name}`,
      ...(o.created ? { creationTimestamp: o.created } : {}),
      ...(o.mirrorOf !== undefined ? { annotations: { [MIRROR_POD_ANNOTATION]: o.mirrorOf } } : {}),
    },
    spec: { nodeName: NODE, containers: [{ name: 'c', image: 'busybox' }] },
    ...(o.phase ? { status: { phase: o.phase } } : {}),
  } as Pod;
}

function staticPod(name: string, image = 'busybox'): Pod {
  const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image }] } });
  return staticPodFromManifest(manifest, `/etc/pods/${name}.json`, NODE);
}

function setup() {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const events: string[] = [];
  const sources = new PodSources({
    client,
    nodeName: NODE,
    nodeUid: () => 'node-uid',
    clock,
    log: new MemLog(),
    staticPodPath: '',
    fileCheckFrequencyMs: 1000,
    events: {
      gone: (uid, fromApi) => events.push(`gone ${uid} ${fromApi ? 'api' : 'file'}`),
      staticPod: (p) => events.push(`static ${p.metadata.name}`),
      apiPod: (p) => events.push(`api ${p.metadata.name}`),
    },
  });
  return { client, clock, events, sources };
}

test('changes are held back until open(), then delivered in order, later ones at once', (t) => {
  const s = setup();
  s.sources.snapshot('api', [apiPod('a')]);
  s.sources.upsert('api', apiPod('b'));
  t.deepEqual(s.events, []);
  t.deepEqual(s.sources.knownUids(), []);
  s.sources.open();
  t.deepEqual(s.events, ['api a', 'api b']);
  s.sources.remove('api', apiPod('a'));
  t.deepEqual(s.events, ['api a', 'api b', 'gone uid-a api']);
  t.deepEqual(s.sources.knownUids(), ['uid-b']);
});

test('an API snapshot drops pods it no longer has, keeps mirror pods apart, and orders running pods first, then by creation', (t) => {
  const s = setup();
  s.sources.open();
  s.sources.snapshot('api', [apiPod('old')]);
  s.events.length = 0;
  s.sources.snapshot('api', [
    apiPod('late', { created: '2025-01-01T00:00:02Z' }),
    apiPod('early', { created: '2025-01-01T00:00:01Z' }),
    apiPod('running', { created: '2025-01-01T00:00:03Z', phase: 'Running' }),
    apiPod('web-node-1', { mirrorOf: 'hash' }),
  ]);
  t.deepEqual(s.events, ['gone uid-old api', 'api running', 'api early', 'api late']);
  t.deepEqual(s.sources.knownUids().sort(), ['uid-early', 'uid-late', 'uid-running']);
});

test('the static set replaces the previous one: pods missing from it are gone', (t) => {
  const s = setup();
  s.sources.open();
  const a = staticPod('a');
  const b = staticPod('b');
  s.sources.snapshot('file', [a, b]);
  s.sources.snapshot('file', [b]);
  t.deepEqual(s.events, ['static a-node-1', 'static b-node-1', `gone ${a.metadata.uid} file`, 'static b-node-1']);
  t.deepEqual(s.sources.knownUids(), [b.metadata.uid]);
});

test("a static pod's status goes to its current mirror pod; an API pod's to itself", (t) => {
  const s = setup();
  s.sources.open();
  const web = staticPod('web');
  const hash = web.metadata.annotations![CONFIG_HASH];
  s.sources.snapshot('file', [web]);
  t.is(s.sources.apiPodRef(web), undefined, 'no mirror pod yet');
  s.sources.upsert('api', apiPod('web-node-1', { mirrorOf: 'old-hash', uid: 'mirror-old' }));
  t.is(s.sources.apiPodRef(web), undefined, 'a mirror of an older manifest does not count');
  s.sources.upsert('api', apiPod('web-node-1', { mirrorOf: hash, uid: 'mirror-uid' }));
  t.deepEqual(s.sources.apiPodRef(web), { namespace: 'default', name: 'web-node-1', uid: 'mirror-uid' });
  t.deepEqual(s.sources.apiPodRef(apiPod('x')), { namespace: 'default', name: 'x', uid: 'uid-x' });
  t.deepEqual(s.events, ['static web-node-1'], 'mirror pods are not API pods to run');
});

test('run: lists the API pods, then creates the mirror pods of the static pods; abort ends it', async (t) => {
  const s = setup();
  s.client.seed(podsResource, apiPod('a'));
  s.sources.open();
  const web = staticPod('web');
  s.sources.snapshot('file', [web]);
  t.false(s.sources.synced);
  const ac = new AbortController();
  const run = s.sources.run(ac.signal);
  await s.clock.advance(0);
  t.true(s.sources.synced);
  t.true(s.events.includes('api a'));
  await s.clock.advance(10_000);
  const mirror = s.client.peek<Pod>(podsResource, 'web-node-1', 'default');
  t.truthy(mirror, 'mirror pod created once the API list arrived');
  t.deepEqual(mirror!.metadata.ownerReferences?.map((o) => o.uid), ['node-uid']);
  ac.abort();
  await run;
  t.is(s.clock.pending, 0);
});
