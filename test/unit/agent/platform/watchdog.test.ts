import test from 'ava';
import { Watchdog, type Timers } from '../../../../agent/platform/watchdog';
import type { SdNotifier } from '../../../../common/systemd';
import type { Log } from '../../../../agent/platform/logger';

class FakeTimers implements Timers {
  now = 0;
  private seq = 0;
  private pending = new Map<number, { at: number; fn: () => void }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.now + ms, fn });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.pending.delete(h as number);
  }
  get size(): number {
    return this.pending.size;
  }
  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      const next = [...this.pending.entries()].filter(([, p]) => p.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!next) break;
      this.pending.delete(next[0]);
      this.now = next[1].at;
      next[1].fn();
    }
    this.now = end;
  }
}

function recorder(): SdNotifier & { sent: number[]; clock: FakeTimers } {
  const clock = new FakeTimers();
  const sent: number[] = [];
  return {
    sent,
    clock,
    ready() {},
    status() {},
    stopping() {},
    watchdog() {
      sent.push(clock.now);
    },
    watchdogIntervalMs: () => 20_000,
  };
}

const quietLog = (): Log & { errors: string[]; infos: string[] } => {
  const errors: string[] = [];
  const infos: string[] = [];
  return { errors, infos, debug() {}, info: (_o, m) => infos.push(m), warn() {}, error: (_o, m) => errors.push(m) };
};

test('sends a keep-alive at once and then every half interval while healthy', async (t) => {
  const n = recorder();
  const ac = new AbortController();
  const wd = new Watchdog({ notifier: n, intervalMs: 20_000, healthy: () => true, timers: n.clock });
  t.is(wd.periodMs, 10_000);
  const done = wd.run(ac.signal);
  n.clock.advance(35_000);
  t.deepEqual(n.sent, [0, 10_000, 20_000, 30_000]);
  ac.abort();
  await done;
  t.is(n.clock.size, 0, 'no timer left behind');
});

test('stops the keep-alives while unhealthy (a stuck heartbeat loop) and resumes after', async (t) => {
  const n = recorder();
  const log = quietLog();
  let healthy = true;
  const ac = new AbortController();
  const done = new Watchdog({ notifier: n, intervalMs: 20_000, healthy: () => healthy, timers: n.clock, log }).run(ac.signal);
  n.clock.advance(10_000);
  healthy = false;
  n.clock.advance(40_000);
  t.deepEqual(n.sent, [0, 10_000], 'nothing sent while unhealthy');
  t.is(log.errors.length, 1, 'logged once, not every tick');
  healthy = true;
  n.clock.advance(10_000);
  t.deepEqual(n.sent, [0, 10_000, 60_000]);
  t.is(log.infos.length, 1);
  ac.abort();
  await done;
});

test('a throwing health check counts as unhealthy', async (t) => {
  const n = recorder();
  const ac = new AbortController();
  const done = new Watchdog({
    notifier: n,
    intervalMs: 2_000,
    healthy: () => {
      throw new Error('x');
    },
    timers: n.clock,
  }).run(ac.signal);
  n.clock.advance(5_000);
  t.deepEqual(n.sent, []);
  ac.abort();
  await done;
});

test('without WatchdogSec run resolves at once and schedules nothing', async (t) => {
  const n = recorder();
  for (const intervalMs of [undefined, 0]) {
    const wd = new Watchdog({ notifier: n, intervalMs, healthy: () => true, timers: n.clock });
    t.is(wd.periodMs, undefined);
    await wd.run(new AbortController().signal);
  }
  t.deepEqual(n.sent, []);
  t.is(n.clock.size, 0);
});
