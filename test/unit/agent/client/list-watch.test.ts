import test from 'ava';
import { isResourceExpired } from '../../../../common/informer/list-watch';
import { apiListWatch, timersFromSleep } from '../../../../agent/client/list-watch';
import { GoneError } from '../../../../agent/client/client-error';
import { podsResource } from '../../../../agent/pod/config-objects';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';

const pod = (name: string, node: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: node, containers: [] } });

test('lists and watches with the selectors; the watch asks for bookmarks and the informer\'s lifetime as timeoutSeconds', async (t) => {
  const api = new FakeApiClient();
  api.seed(podsResource, pod('a', 'n1'));
  const lw = apiListWatch(api, podsResource, { fieldSelector: 'spec.nodeName=n1', listTimeoutMs: 5000 });
  const list = await lw.list(new AbortController().signal);
  t.deepEqual(list.items.map((p) => p.metadata.name), ['a']);
  t.is(list.resourceVersion, api.currentRv);
  t.like(api.callsOf('list', 'pods')[0].opts, { fieldSelector: 'spec.nodeName=n1', timeoutMs: 5000 });
  const ac = new AbortController();
  const it = lw.watch(list.resourceVersion, ac.signal, { timeoutMs: 301_500 })[Symbol.asyncIterator]();
  const next = it.next();
  api.seed(podsResource, pod('b', 'n1'));
  t.is((await next).value?.object.metadata.name, 'b');
  t.like(api.callsOf('watch', 'pods')[0].opts, { fieldSelector: 'spec.nodeName=n1', resourceVersion: list.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 302 });
  ac.abort();
  t.true((await it.next()).done);
});

test('410 from the server becomes ResourceExpiredError', async (t) => {
  const api = new FakeApiClient();
  api.compactedRv = 1000;
  const lw = apiListWatch(api, podsResource);
  const err = await t.throwsAsync(async () => {
    for await (const _ of lw.watch('5', new AbortController().signal, { timeoutMs: 1000 })) t.fail();
  });
  t.true(isResourceExpired(err));
  t.false(err instanceof GoneError);
});

test('timersFromSleep: after() fires on the clock and can be cancelled', async (t) => {
  const clock = new FakeClock();
  const timers = timersFromSleep(clock);
  const fired: string[] = [];
  timers.after(100, () => fired.push('a'));
  const cancel = timers.after(50, () => fired.push('b'));
  cancel();
  await clock.advance(200);
  t.deepEqual(fired, ['a']);
  t.is(timers.now(), clock.now());
});
