/** Pull records survive restarts; image GC frees space by policy; the default pull policy follows the tag. */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Simulator } from '../../../../agent/cri/simulator';
import { ImageGc } from '../../../../agent/pod/image-gc';
import { pullPolicy } from '../../../../agent/pod/image-manager';
import { PullRecords, recordName } from '../../../../agent/pod/pull-records';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';

test('pull records: an intent is written before the pull and replaced by a record after; leftover intents are settled at start', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-pulls-'));
  try {
    const r = new PullRecords(dir, () => Date.UTC(2025, 0, 1));
    await r.startPull('svc.local/a:1');
    t.deepEqual(await readdir(path.join(dir, 'pulling')), [recordName('svc.local/a:1')]);
    await r.finishPull('svc.local/a:1', 'sha256:aaa');
    t.deepEqual(await readdir(path.join(dir, 'pulling')), []);
    const doc = JSON.parse(await readFile(path.join(dir, 'pulled', recordName('sha256:aaa')), 'utf8')) as Record<string, unknown>;
    t.like(doc, { kind: 'ImagePulledRecord', imageRef: 'sha256:aaa', images: ['svc.local/a:1'], lastUpdatedTime: '2025-01-01T00:00:00.000Z' });
    t.is((await readFile(path.join(dir, 'pulled', recordName('sha256:aaa')))).length > 0, true);

    // An agent that died mid-pull leaves intents; the next start settles them.
    await r.startPull('svc.local/arrived:1');
    await r.startPull('svc.local/lost:1');
    const again = new PullRecords(dir);
    t.is((await again.intents()).length, 2);
    const settled = await again.recover((image) => Promise.resolve(image === 'svc.local/arrived:1' ? 'sha256:bbb' : undefined));
    t.is(settled, 2);
    t.deepEqual(await readdir(path.join(dir, 'pulling')), []);
    t.deepEqual((await again.pulled('sha256:bbb'))?.images, ['svc.local/arrived:1']);
    await again.forget('sha256:bbb');
    t.is(await again.pulled('sha256:bbb'), undefined);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the default pull policy is Always for :latest and untagged images, IfNotPresent otherwise', (t) => {
  t.is(pullPolicy({ name: 'c', image: 'busybox' }), 'Always');
  t.is(pullPolicy({ name: 'c', image: 'svc.local/busybox:latest' }), 'Always');
  t.is(pullPolicy({ name: 'c', image: 'localhost:5000/app' }), 'Always');
  t.is(pullPolicy({ name: 'c', image: 'localhost:5000/app:1.2' }), 'IfNotPresent');
  t.is(pullPolicy({ name: 'c', image: 'app@sha256:' + 'a'.repeat(64) }), 'IfNotPresent');
  t.is(pullPolicy({ name: 'c', image: 'busybox', imagePullPolicy: 'Never' }), 'Never');
});

test('image GC: above the high threshold unused images go, least recently used first, until below the low one; in-use, pinned and young images stay', async (t) => {
  const clock = new FakeClock();
  const sim = new Simulator({
    clock,
    images: [
      { ref: 'svc.local/used:1', size: 100 },
      { ref: 'svc.local/old:1', size: 300 },
      { ref: 'svc.local/older:1', size: 300 },
      { ref: 'svc.local/pinned:1', size: 1000, pinned: true },
    ],
  });
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-gc-'));
  let available = 100;
  const gc = new ImageGc({
    runtime: sim,
    clock,
    log: new MemLog(),
    records: new PullRecords(dir),
    highThresholdPercent: 85,
    lowThresholdPercent: 80,
    minAgeMs: 120_000,
    callTimeoutMs: 1000,
    diskUsage: () => Promise.resolve({ capacityBytes: 2000, availableBytes: available }),
  });
  try {
    const sb = { metadata: { name: 'p', namespace: 'd', uid: 'u', attempt: 0 }, hostname: 'p' };
    const sbId = await sim.runPodSandbox(sb);
    await sim.createContainer(sbId, { metadata: { name: 'c', attempt: 0 }, image: { image: 'svc.local/used:1' } }, sb);
    t.deepEqual(await gc.runOnce(), [], 'everything is too young');
    await clock.advance(200_000);
    const removed = await gc.runOnce();
    const remaining = (await sim.listImages()).map((i) => i.repoTags[0]);
    // 95% used: 300 bytes must go to reach 80%: one of the unused images suffices.
    t.is(removed.length, 1);
    t.true(remaining.includes('svc.local/used:1'));
    t.true(remaining.includes('svc.local/pinned:1'));
    available = 1500;
    t.deepEqual(await gc.runOnce(), [], 'below the threshold nothing is removed');
  } finally {
    sim.close();
    await rm(dir, { recursive: true, force: true });
  }
});
