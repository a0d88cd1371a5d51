import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { LogBackend } from '../../../../../apiserver/filters/audit/log-backend';
import type { AuditEvent } from '../../../../../apiserver/filters/audit/request-audit';

const dir = mkdtempSync(join(tmpdir(), 'svc-audit-log-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const event = (n: number, pad = 0): AuditEvent => ({
  kind: 'Event',
  apiVersion: 'audit.k8s.io/v1',
  level: 'Metadata',
  auditID: `id-${n}`,
  stage: 'ResponseComplete',
  requestURI: '/api/v1/pods' + 'x'.repeat(pad),
  verb: 'list',
  user: { username: 'u', groups: [] },
  sourceIPs: ['127.0.0.1'],
  requestReceivedTimestamp: '2026-01-01T00:00:00.000Z',
  stageTimestamp: '2026-01-01T00:00:00.000Z',
});

test('one JSON event per line, in a file only its owner may read', async (t) => {
  const path = join(dir, 'a.log');
  const b = new LogBackend({ path, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0 });
  for (let i = 0; i < 3; i++) b.emit(event(i));
  await b.close();
  const lines = readFileSync(path, 'utf8').trim().split('\n');
  t.deepEqual(lines.map((l) => (JSON.parse(l) as AuditEvent).auditID), ['id-0', 'id-1', 'id-2']);
  t.is(statSync(path).mode & 0o777, 0o600);
});

test('past maxsize the file is rotated to <name>-<timestamp><ext>; backups beyond maxbackup are removed', async (t) => {
  const sub = mkdtempSync(join(dir, 'rot-'));
  const path = join(sub, 'audit.log');
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const b = new LogBackend({ path, maxSizeMB: 1, maxBackups: 2, maxAgeDays: 0, now: () => new Date((clock += 1000)) });
  // Each event is about 100 KiB: 10 fit in a megabyte, so 45 events make several rotations.
  for (let i = 0; i < 45; i++) {
    b.emit(event(i, 100 * 1024));
    void b.flush();
  }
  await b.close();
  const files = readdirSync(sub).sort();
  t.is(files.length, 3, files.join(' '));
  t.true(files.includes('audit.log'));
  for (const f of files.filter((f) => f !== 'audit.log')) t.regex(f, /^audit-2026-01-01T00-00-\d\d\.\d{3}\.log$/);
  for (const f of files) t.true(statSync(join(sub, f)).size <= 1024 * 1024);
  // The newest events are in the current file, none lost between the kept files.
  const ids = files.flatMap((f) => readFileSync(join(sub, f), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as AuditEvent).auditID));
  t.true(ids.includes('id-44'));
});

test('a full queue drops events and counts them instead of holding requests up', async (t) => {
  let dropped = 0;
  const b = new LogBackend({ path: join(dir, 'full.log'), maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, bufferSize: 5, onError: (n) => (dropped += n) });
  for (let i = 0; i < 8; i++) b.emit(event(i));
  await b.close();
  t.is(dropped, 3);
  t.is(readFileSync(join(dir, 'full.log'), 'utf8').trim().split('\n').length, 5);
});

test('events are written in batches without losing one: those emitted while a batch is written follow it, in order; flush resolves once all are on disk', async (t) => {
  const path = join(dir, 'batches.log');
  const b = new LogBackend({ path, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0 });
  let n = 0;
  // 20 rounds of 50 events, each round started on a later turn of the event loop (a batch may be under way).
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < 50; i++) b.emit(event(n++));
    await new Promise((r) => setImmediate(r));
  }
  await b.flush();
  const ids = readFileSync(path, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as AuditEvent).auditID);
  t.deepEqual(ids, Array.from({ length: 1000 }, (_, i) => `id-${i}`));
  // A flush with nothing queued resolves at once; closing afterwards loses nothing either.
  await b.flush();
  b.emit(event(1000));
  await b.close();
  t.is(readFileSync(path, 'utf8').trim().split('\n').length, 1001);
});
