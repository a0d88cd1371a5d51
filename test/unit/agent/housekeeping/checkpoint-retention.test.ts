import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { rfc3339 } from '../../../../agent/checkpoint/archive-path';
import { CheckpointHandler } from '../../../../agent/checkpoint/checkpoint-handler';
import { CheckpointRetention, parseArchiveName, planRetention, type ArchiveFile } from '../../../../agent/housekeeping/checkpoint-retention';
import type { Log } from '../../../../agent/platform/logger';
import { tarOf } from '../checkpoint/tar-fixture';

const quiet: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const MIN = 60_000;
const HOUR = 60 * MIN;

/** An archive of pod/container taken `agoMs` before NOW. */
function archive(dir: string, pod: string, container: string, agoMs: number): ArchiveFile {
  const name = `checkpoint-${pod}_default-${container}-${rfc3339(NOW - agoMs)}.tar`;
  return parseArchiveName(dir, name)!;
}

test('archive names parse into their container group and time; other files are not archives', (t) => {
  const a = parseArchiveName('/d', 'checkpoint-web_default-app-2026-11-22T11:00:00Z.tar');
  t.deepEqual(a, { path: '/d/checkpoint-web_default-app-2026-11-22T11:00:00Z.tar', group: 'checkpoint-web_default-app', time: Date.UTC(2026, 10, 22, 11) });
  // Container names may contain dashes: the group is everything before the timestamp.
  t.is(parseArchiveName('/d', 'checkpoint-web_default-side-car-2026-11-22T11:00:00Z.tar')!.group, 'checkpoint-web_default-side-car');
  t.is(parseArchiveName('/d', 'checkpoint-web_default-app-2026-11-22T11:00:00Z.tar.tmp'), undefined);
  t.is(parseArchiveName('/d', 'notes.txt'), undefined);
  t.is(parseArchiveName('/d', 'checkpoint-web_default-app-yesterday.tar'), undefined);
});

test('maxPerContainer keeps the newest K of each container and removes exactly the rest', (t) => {
  const files = [
    archive('/d', 'web', 'app', 1 * MIN),
    archive('/d', 'web', 'app', 3 * MIN),
    archive('/d', 'web', 'app', 2 * MIN),
    archive('/d', 'web', 'app', 4 * MIN),
    archive('/d', 'db', 'app', 10 * HOUR),
  ];
  const plan = planRetention(files, { maxPerContainer: 2, maxAgeMs: 0 }, NOW, new Set());
  t.deepEqual(plan, [files[1].path, files[3].path].sort());
});

test('maxAge removes exactly the archives older than the limit, in every container', (t) => {
  const files = [archive('/d', 'web', 'app', 30 * MIN), archive('/d', 'web', 'app', 2 * HOUR), archive('/d', 'db', 'sql', 90 * MIN), archive('/d', 'db', 'sql', 60 * MIN)];
  const plan = planRetention(files, { maxPerContainer: 0, maxAgeMs: HOUR }, NOW, new Set());
  // Exactly one hour old is not "older than" an hour.
  t.deepEqual(plan, [files[1].path, files[2].path].sort());
});

test('both limits together remove the union; no limits remove nothing', (t) => {
  const files = [archive('/d', 'web', 'app', 1 * MIN), archive('/d', 'web', 'app', 2 * MIN), archive('/d', 'web', 'app', 5 * HOUR)];
  t.deepEqual(planRetention(files, { maxPerContainer: 1, maxAgeMs: 4 * HOUR }, NOW, new Set()), [files[1].path, files[2].path].sort());
  t.deepEqual(planRetention(files, { maxPerContainer: 0, maxAgeMs: 0 }, NOW, new Set()), []);
});

test('an archive in flight is neither removed nor counted, however old its name says it is', (t) => {
  const files = [archive('/d', 'web', 'app', 1 * MIN), archive('/d', 'web', 'app', 2 * MIN), archive('/d', 'web', 'app', 9 * HOUR)];
  const inFlight = new Set([files[0].path, files[2].path]);
  // K=1: the in-flight newest does not count, so the 2-minute one is kept; the 9-hour one is in flight.
  t.deepEqual(planRetention(files, { maxPerContainer: 1, maxAgeMs: HOUR }, NOW, inFlight), []);
  t.deepEqual(planRetention(files, { maxPerContainer: 1, maxAgeMs: HOUR }, NOW, new Set([files[0].path])), [files[2].path]);
});

function dirWith(names: string[]): string {
  const root = mkdtempSync(path.join(tmpdir(), 'svc-retention-'));
  const dir = path.join(root, 'checkpoints');
  mkdirSync(dir);
  for (const n of names) writeFileSync(path.join(dir, n), 'x');
  return dir;
}

test('runOnce deletes what the plan says from the directory and leaves other files alone', async (t) => {
  const names = [0, 1, 2, 3].map((i) => `checkpoint-web_default-app-${rfc3339(NOW - i * MIN)}.tar`);
  const dir = dirWith([...names, 'README', 'checkpoint-web_default-app-garbage.tar']);
  t.teardown(() => rmSync(path.dirname(dir), { recursive: true, force: true }));
  let removedCount = -1;
  const r = new CheckpointRetention({ dir, policy: { maxPerContainer: 2, maxAgeMs: 0 }, now: () => NOW, inFlight: { inFlight: () => new Set() }, log: quiet, onRemoved: (n) => (removedCount = n) });
  const report = await r.runOnce();
  t.deepEqual(report.removed.map((p) => path.basename(p)).sort(), [names[2], names[3]].sort());
  t.is(removedCount, 2);
  t.deepEqual(readdirSync(dir).sort(), [names[0], names[1], 'README', 'checkpoint-web_default-app-garbage.tar'].sort());
});

test('a missing directory is an empty one', async (t) => {
  const r = new CheckpointRetention({ dir: '/nonexistent/svc/checkpoints', policy: { maxPerContainer: 1, maxAgeMs: 1 }, now: () => NOW, inFlight: { inFlight: () => new Set() }, log: quiet });
  t.deepEqual(await r.runOnce(), { removed: [], kept: 0 });
});

test('an archive the checkpoint handler is still writing survives a round that would remove it', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'svc-retention-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  // The clock says the checkpoint began 10 hours ago, so maxAge would remove it if it were done.
  let clock = NOW - 10 * HOUR;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let written!: (location: string) => void;
  const writing = new Promise<string>((r) => (written = r));
  const h = new CheckpointHandler({
    enabled: () => true,
    locator: { containerId: () => Promise.resolve('cid') },
    runtime: {
      async checkpointContainer(_id, location) {
        writeFileSync(location, await tarOf({ 'config.dump': '{}' }));
        written(location);
        await released;
      },
    },
    rootDir: root,
    now: () => clock,
    log: quiet,
  });
  const done = h.checkpoint({ namespace: 'default', pod: 'web', container: 'app', timeoutSeconds: 0 });
  const location = await writing;
  clock = NOW;
  const r = new CheckpointRetention({ dir: path.join(root, 'checkpoints'), policy: { maxPerContainer: 0, maxAgeMs: HOUR }, now: () => clock, inFlight: h, log: quiet });
  t.deepEqual((await r.runOnce()).removed, []);
  t.true(existsSync(location));
  release();
  t.deepEqual(await done, { items: [location] });
  // Once finished it is an ordinary (old) archive.
  t.deepEqual((await r.runOnce()).removed, [location]);
  t.false(existsSync(location));
});
