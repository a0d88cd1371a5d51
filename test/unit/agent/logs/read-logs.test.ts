/** CRI log files read for log requests: parsing, tailLines, since, timestamps, limitBytes, partial lines and follow. */
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { parseCriLine } from '../../../../agent/logs/cri-log';
import { LogOptionsError, parseLogOptions, type LogOptions } from '../../../../agent/logs/log-options';
import { readContainerLogs } from '../../../../agent/logs/read-logs';
import { FakeClock } from '../../../helpers/fake-clock';

const LOG = [
  '2025-01-01T00:00:01.000000001Z stdout F one',
  '2025-01-01T00:00:02.000000000Z stderr F two',
  '2025-01-01T00:00:03.000000000Z stdout P thr',
  '2025-01-01T00:00:03.500000000Z stdout F ee',
  'garbage that is not CRI',
  '2025-01-01T00:00:04.000000000Z stdout F four',
  '2025-01-01T00:00:05.000000000Z stdout F',
  '',
].join('\n');

async function withFile(fn: (file: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-logs-'));
  try {
    const file = path.join(dir, '0.log');
    await writeFile(file, LOG);
    await fn(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Moves fake time in small steps, letting real file I/O finish in between, until cond holds. */
async function settleUntil(clock: FakeClock, cond: () => boolean, steps = 100): Promise<boolean> {
  for (let i = 0; i < steps && !cond(); i++) {
    await clock.advance(100);
    await new Promise((r) => setTimeout(r, 2));
  }
  return cond();
}

async function read(file: string, o: Partial<LogOptions>, clock = new FakeClock()): Promise<string> {
  const chunks: Buffer[] = [];
  await readContainerLogs(file, { follow: false, previous: false, timestamps: false, ...o }, (c) => void chunks.push(c), { clock, isRunning: () => Promise.resolve(false) });
  return Buffer.concat(chunks).toString();
}

test('CRI lines: timestamp, stream, tag, content; P records continue the line', (t) => {
  const r = parseCriLine(Buffer.from('2025-01-01T00:00:01.123456789Z stderr P hello world'))!;
  t.is(r.stream, 'stderr');
  t.true(r.partial);
  t.is(r.content.toString(), 'hello world');
  t.is(r.time, Date.UTC(2025, 0, 1, 0, 0, 1, 123));
  t.is(parseCriLine(Buffer.from('2025-01-01T00:00:01Z stdout F:x tagged'))?.content.toString(), 'tagged');
  t.is(parseCriLine(Buffer.from('2025-01-01T00:00:01Z stdout F'))?.content.toString(), '');
  t.is(parseCriLine(Buffer.from('not a log line')), undefined);
  t.is(parseCriLine(Buffer.from('2025-01-01T00:00:01Z stdin F x')), undefined);
});

test('whole log, tailLines counting joined partial lines, since, timestamps and limitBytes', async (t) => {
  await withFile(async (file) => {
    t.is(await read(file, {}), 'one\ntwo\nthree\nfour\n\n');
    t.is(await read(file, { tailLines: 3 }), 'three\nfour\n\n');
    t.is(await read(file, { tailLines: 0 }), '');
    t.is(await read(file, { tailLines: 100 }), 'one\ntwo\nthree\nfour\n\n');
    t.is(await read(file, { sinceMs: Date.UTC(2025, 0, 1, 0, 0, 3, 200) }), 'ee\nfour\n\n');
    t.is(await read(file, { timestamps: true, tailLines: 2 }), '2025-01-01T00:00:04.000000000Z four\n2025-01-01T00:00:05.000000000Z \n');
    t.is(await read(file, { limitBytes: 6 }), 'one\ntw');
  });
});

test('follow streams what is appended and ends once the container stopped and the file is drained', async (t) => {
  await withFile(async (file) => {
    const clock = new FakeClock();
    let running = true;
    let out = '';
    const done = readContainerLogs(file, { follow: true, previous: false, timestamps: false, tailLines: 1 }, (c) => void (out += c.toString()), { clock, isRunning: () => Promise.resolve(running), pollMs: 100 });
    t.true(await settleUntil(clock, () => out === '\n'));
    await appendFile(file, '2025-01-01T00:00:06Z stdout F five\n2025-01-01T00:00:07Z stdout P si');
    t.true(await settleUntil(clock, () => out === '\nfive\n'), out);
    // The partial record's line ends; it prints without a newline and the next record continues it.
    await appendFile(file, '\n2025-01-01T00:00:08Z stdout F xth\n');
    t.true(await settleUntil(clock, () => out === '\nfive\nsixth\n'), out);
    let ended = false;
    void done.then(() => (ended = true));
    await clock.advance(3000);
    t.false(ended, 'still following while the container runs');
    running = false;
    t.true(await settleUntil(clock, () => ended));
  });
});

test('a follower ends when the caller goes away', async (t) => {
  await withFile(async (file) => {
    const clock = new FakeClock();
    const ac = new AbortController();
    let ended = false;
    void readContainerLogs(file, { follow: true, previous: false, timestamps: false }, () => undefined, { clock, isRunning: () => Promise.resolve(true) }, ac.signal).then(() => (ended = true));
    await clock.advance(5000);
    t.false(ended);
    ac.abort();
    t.true(await settleUntil(clock, () => ended));
  });
});

test('options: booleans, integers, since as seconds or a time, not both', (t) => {
  const now = Date.UTC(2025, 0, 1, 1, 0, 0);
  t.deepEqual(parseLogOptions(new URLSearchParams('follow=true&tailLines=10&sinceSeconds=60&limitBytes=5&timestamps=1'), now), {
    follow: true,
    previous: false,
    timestamps: true,
    tailLines: 10,
    sinceMs: now - 60_000,
    limitBytes: 5,
  });
  t.is(parseLogOptions(new URLSearchParams('sinceTime=2025-01-01T00:00:00Z'), now).sinceMs, Date.UTC(2025, 0, 1));
  t.throws(() => parseLogOptions(new URLSearchParams('tailLines=-1'), now), { instanceOf: LogOptionsError });
  t.throws(() => parseLogOptions(new URLSearchParams('follow=maybe'), now), { message: /follow: invalid boolean/ });
  t.throws(() => parseLogOptions(new URLSearchParams('sinceSeconds=5&sinceTime=2025-01-01T00:00:00Z'), now), { message: /at most one of sinceTime or sinceSeconds/ });
});

test('options: booleans as Go spells them (the Python client sends follow=True)', (t) => {
  const now = Date.UTC(2025, 0, 1);
  t.like(parseLogOptions(new URLSearchParams('follow=True&previous=False&timestamps=T'), now), { follow: true, previous: false, timestamps: true });
  t.like(parseLogOptions(new URLSearchParams('follow=TRUE&timestamps=f'), now), { follow: true, timestamps: false });
  t.like(parseLogOptions(new URLSearchParams('follow'), now), { follow: true });
  t.throws(() => parseLogOptions(new URLSearchParams('previous=yes'), now), { instanceOf: LogOptionsError, message: /^previous: invalid boolean "yes"/ });
});
