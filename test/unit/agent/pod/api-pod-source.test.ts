/** The API pod source: list with the node's field selector, watch from the list's version, resume after stream ends, list again on 410. */
import test from 'ava';
import { ClientError, GoneError } from '../../../../agent/client/client-error';
import { ApiPodSource } from '../../../../agent/pod/api-pod-source';
import { podsResource } from '../../../../agent/pod/config-objects';
import type { PodSourceHandler, SourceName } from '../../../../agent/pod/pod-source';
import type { Pod } from '../../../../agent/api/core-v1';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock, flush } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';

class Recorder implements PodSourceHandler {
  readonly events: string[] = [];
  snapshot(source: SourceName, pods: Pod[]): void {
    this.events.push(`snapshot ${source} [${pods.map((p) => p.metadata.name).join(',')}]`);
  }
  upsert(source: SourceName, pod: Pod): void {
    this.events.push(`upsert ${source} ${pod.metadata.name}${pod.metadata.deletionTimestamp ? ' (deleting)' : ''}`);
  }
  remove(source: SourceName, pod: Pod): void {
    this.events.push(`remove ${source} ${pod.metadata.name}`);
  }
}

const pod = (name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] } });

test('lists with spec.nodeName=<node>, then watches from the list version; changes and deletions arrive in order', async (t) => {
  const api = new FakeApiClient();
  const clock = new FakeClock();
  const rec = new Recorder();
  api.seed(podsResource, pod('a'));
  const src = new ApiPodSource({ client: api, nodeName: 'n1', clock, log: new MemLog(), handler: rec });
  const ac = new AbortController();
  const running = src.run(ac.signal);
  await flush();
  t.true(src.synced);
  const list = api.callsOf('list', 'pods')[0];
  t.is((list.opts as { fieldSelector: string }).fieldSelector, 'spec.nodeName=n1');
  const watch = api.callsOf('watch', 'pods')[0];
  t.is((watch.opts as { fieldSelector: string }).fieldSelector, 'spec.nodeName=n1');
  t.is((watch.opts as { resourceVersion: string }).resourceVersion, api.currentRv);
  api.seed(podsResource, pod('b'));
  api.mutate(podsResource, 'a', 'default', (o) => (o.metadata.deletionTimestamp = '2025-01-01T00:00:30Z'));
  api.remove(podsResource, 'b', 'default');
  await flush();
  t.deepEqual(rec.events, ['snapshot api [a]', 'upsert api b', 'upsert api a (deleting)', 'remove api b']);
  ac.abort();
  await running;
});

test('a stream the server ends is resumed from the last version without listing again; 410 lists again; failures back off', async (t) => {
  const api = new FakeApiClient();
  const clock = new FakeClock();
  const rec = new Recorder();
  const log = new MemLog();
  const src = new ApiPodSource({ client: api, nodeName: 'n1', clock, log, handler: rec });
  const ac = new AbortController();
  const running = src.run(ac.signal);
  await flush();
  api.seed(podsResource, pod('a'));
  await flush();
  const rvAfterA = api.currentRv;
  api.endWatches();
  await flush();
  t.is(api.callsOf('list', 'pods').length, 1);
  t.is((api.callsOf('watch', 'pods').at(-1)!.opts as { resourceVersion: string }).resourceVersion, rvAfterA);

  api.breakWatches(new GoneError(410, 'Expired', 'too old resource version'));
  await flush();
  t.is(api.callsOf('list', 'pods').length, 2);
  t.is(rec.events.at(-1), 'snapshot api [a]');

  api.breakWatches(new ClientError(0, 'ConnectionFailed', 'ECONNRESET'));
  await flush();
  t.truthy(log.find('pod list/watch failed; retrying')[0]);
  const watches = api.callsOf('watch', 'pods').length;
  await clock.advance(1000);
  t.is(api.callsOf('watch', 'pods').length, watches + 1, 'watch resumed after the back-off');
  t.is(api.callsOf('list', 'pods').length, 2, 'without listing again');
  ac.abort();
  await running;
});
