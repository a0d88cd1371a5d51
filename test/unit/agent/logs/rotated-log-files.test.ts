/** Rotated log names: the UTC stamp, name order as time order, leftovers, and the count limit. */
import test from 'ava';
import { excessFiles, rotatedName, rotationStamp, splitLeftovers } from '../../../../agent/logs/rotated-log-files';

test('the stamp is YYYYMMDD-HHMMSS in UTC, zero-padded', (t) => {
  t.is(rotationStamp(Date.UTC(2025, 0, 2, 3, 4, 5, 999)), '20250102-030405');
  t.is(rotationStamp(Date.UTC(2024, 11, 31, 23, 59, 59)), '20241231-235959');
  t.is(rotatedName('/var/log/pods/ns_p_uid/c/0.log', Date.UTC(2025, 5, 30, 12)), '/var/log/pods/ns_p_uid/c/0.log.20250630-120000');
});

test('sorting names sorts rotations by time, compressed or not', (t) => {
  const times = [Date.UTC(2025, 0, 1, 9), Date.UTC(2024, 11, 31, 23), Date.UTC(2025, 0, 1, 10), Date.UTC(2025, 0, 1, 9, 0, 1)];
  const names = times.map((ms, i) => rotatedName('/d/0.log', ms) + (i % 2 ? '.gz' : ''));
  const byName = [...names].sort();
  const byTime = times.map((ms, i) => ({ ms, n: names[i] })).sort((a, b) => a.ms - b.ms).map((x) => x.n);
  t.deepEqual(byName, byTime);
});

test('leftovers are .tmp files and uncompressed files whose .gz exists', (t) => {
  const files = ['/d/0.log.20250101-000000', '/d/0.log.20250101-000000.gz', '/d/0.log.20250101-000100.gz.tmp', '/d/0.log.20250101-000200'];
  t.deepEqual(splitLeftovers(files), {
    inUse: ['/d/0.log.20250101-000000.gz', '/d/0.log.20250101-000200'],
    leftovers: ['/d/0.log.20250101-000000', '/d/0.log.20250101-000100.gz.tmp'],
  });
});

test('before a rotation at most maxFiles - 2 rotated files stay; the oldest go', (t) => {
  const rotated = ['/d/0.log.3', '/d/0.log.1.gz', '/d/0.log.2.gz', '/d/0.log.4'];
  t.deepEqual(excessFiles(rotated, 5), ['/d/0.log.1.gz']);
  t.deepEqual(excessFiles(rotated, 3), ['/d/0.log.1.gz', '/d/0.log.2.gz', '/d/0.log.3']);
  t.deepEqual(excessFiles(rotated, 2), ['/d/0.log.1.gz', '/d/0.log.2.gz', '/d/0.log.3', '/d/0.log.4']);
  t.deepEqual(excessFiles(rotated, 10), []);
});
