import test from 'ava';
import { GoneError } from '../../../../agent/client/client-error';
import { csrResource } from '../../../../agent/client/resources';
import { resumingWatch } from '../../../../agent/client/resuming-watch';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock, flush } from '../../../helpers/fake-clock';

const csr = (name: string) => ({ metadata: { name }, spec: {} });

test('re-opens an ended stream from the last version seen, missing nothing and repeating nothing', async (t) => {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const start = client.seed(csrResource, csr('a')).metadata.resourceVersion;
  const ac = new AbortController();
  const got: string[] = [];
  const run = (async () => {
    for await (const ev of resumingWatch(client, csrResource, { resourceVersion: start, signal: ac.signal, sleep: (ms, s) => clock.sleep(ms, s) })) {
      got.push(`${ev.type}:${ev.object.metadata.name}`);
    }
  })();
  await flush();
  client.seed(csrResource, csr('b'));
  await flush();
  client.endWatches();
  client.seed(csrResource, csr('c')); // happens while no stream is open
  await flush();
  client.seed(csrResource, csr('d'));
  await flush();
  t.deepEqual(got, ['ADDED:b', 'ADDED:c', 'ADDED:d']);
  const watches = client.callsOf('watch').map((c) => (c.opts as { resourceVersion?: string }).resourceVersion);
  t.is(watches.length, 2);
  t.is(watches[0], start);
  t.is(Number(watches[1]), Number(start) + 1, 'resumed from the version of b');
  ac.abort();
  await run;
});

test('an expired start version surfaces as GoneError', async (t) => {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  client.compactedRv = 500;
  await t.throwsAsync(
    (async () => {
      for await (const _ of resumingWatch(client, csrResource, { resourceVersion: '10', sleep: (ms, s) => clock.sleep(ms, s) })) t.fail();
    })(),
    { instanceOf: GoneError },
  );
});

test('a stream that ends at once is re-opened only after a pause', async (t) => {
  const client = new FakeApiClient();
  const clock = new FakeClock();
  const ac = new AbortController();
  const run = (async () => {
    for await (const _ of resumingWatch(client, csrResource, { resourceVersion: '1', signal: ac.signal, idleReopenDelayMs: 1000, sleep: (ms, s) => clock.sleep(ms, s) })) t.fail();
  })();
  await flush();
  client.endWatches();
  await flush();
  t.is(client.callsOf('watch').length, 1);
  await clock.advance(1000);
  t.is(client.callsOf('watch').length, 2);
  ac.abort();
  await run;
});
