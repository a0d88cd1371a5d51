import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { sleep } from './load';
import { progress } from './progress';
import { percentile, round } from './stats';
import type { Target } from './target';

export interface FanoutOptions {
  /** Watch path with its query (the same for the API and the floor server). */
  watchPath: string;
  watchers: number;
  /** How many watch connections are being opened at once (TLS handshakes in flight). */
  openConcurrency: number;
  writes: number;
  intervalMs: number;
  /** Performs write number k; the watchers must then see an event for the object named objectName(k). */
  write: (k: number) => Promise<void>;
  objectName: (k: number) => string;
  /** How long to wait for the last deliveries after the last write. */
  drainMs: number;
}

/** One round's raw outcome: every (write, watcher) latency that arrived. */
export interface FanoutSample {
  watchers: number;
  establishSeconds: number;
  writes: number;
  latencies: number[];
}

export interface FanoutRound {
  establish_seconds: number;
  p50_ms: number;
  p99_ms: number;
  missing: number;
}

export interface FanoutResult {
  watchers: number;
  writes_per_round: number;
  interval_ms: number;
  /** Deliveries expected (writes × watchers, summed over rounds) and how many arrived. */
  deliveries: number;
  missing: number;
  /** Over every delivery of every round. */
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  rounds: FanoutRound[];
}

/** Pools rounds into one figure (percentiles over all their deliveries) and keeps each round's own. */
export function summarizeFanout(samples: readonly FanoutSample[], intervalMs: number): FanoutResult {
  const all = samples.flatMap((s) => s.latencies);
  const expected = samples.reduce((n, s) => n + s.writes * s.watchers, 0);
  return {
    watchers: samples[0]?.watchers ?? 0,
    writes_per_round: samples[0]?.writes ?? 0,
    interval_ms: intervalMs,
    deliveries: all.length,
    missing: expected - all.length,
    p50_ms: round(percentile(all, 0.5)),
    p99_ms: round(percentile(all, 0.99)),
    max_ms: round(percentile(all, 1)),
    rounds: samples.map((s) => ({
      establish_seconds: round(s.establishSeconds, 2),
      p50_ms: round(percentile(s.latencies, 0.5)),
      p99_ms: round(percentile(s.latencies, 0.99)),
      missing: s.writes * s.watchers - s.latencies.length,
    })),
  };
}

const OPEN_TIMEOUT_MS = 120_000;

/**
 * One watch stream on its own TLS connection (its own https.Agent, so nothing is shared or
 * pooled). Splits the chunked body into JSON lines and reports each event with its arrival time.
 */
class Watcher {
  private readonly agent: HttpsAgent;
  private req?: ClientRequest;
  private buf = '';

  constructor(
    private readonly target: Target,
    private readonly onEvent: (type: string, name: string | undefined, at: number) => void,
  ) {
    this.agent = new HttpsAgent({ keepAlive: true, maxSockets: 1 });
  }

  /** Resolves at the first event line (the server's initial BOOKMARK), when the watch is surely registered. */
  open(path: string): Promise<void> {
    const t = this.target;
    return new Promise<void>((resolve, reject) => {
      let first = true;
      const req = httpsRequest(
        {
          host: t.host,
          port: t.port,
          path,
          method: 'GET',
          agent: this.agent,
          ca: t.tls.ca,
          cert: t.tls.cert,
          key: t.tls.key,
          servername: t.tls.servername,
          headers: { accept: 'application/json' },
        },
        (res: IncomingMessage) => {
          if (res.statusCode !== 200) {
            reject(new Error(`${t.name}: watch answered ${res.statusCode}`));
            res.resume();
            return;
          }
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const at = performance.now();
            this.buf += chunk;
            let nl: number;
            while ((nl = this.buf.indexOf('\n')) >= 0) {
              const line = this.buf.slice(0, nl);
              this.buf = this.buf.slice(nl + 1);
              if (line.trim() === '') continue;
              const ev = JSON.parse(line) as { type: string; object?: { metadata?: { name?: string } } };
              if (first) {
                first = false;
                resolve();
              }
              this.onEvent(ev.type, ev.object?.metadata?.name, at);
            }
          });
          res.on('error', () => undefined);
        },
      );
      req.on('error', (err) => (first ? reject(err) : undefined));
      req.end();
      this.req = req;
    });
  }

  close(): void {
    this.req?.destroy();
    this.agent.destroy();
  }
}

/**
 * Opens `watchers` watch streams, waits until each has received its first line, then performs
 * `writes` writes `intervalMs` apart and records, for every (write, watcher) pair, the time from
 * just before the write was sent to the event's arrival at that watcher.
 */
export async function measureFanout(targets: Target | readonly Target[], o: FanoutOptions): Promise<FanoutSample> {
  // Watcher i goes to targets[i % n]: several API server replicas share the watchers evenly.
  const spread = Array.isArray(targets) ? (targets as readonly Target[]) : [targets as Target];
  const target = spread[0];
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const pending = new Map<string, number>(); // object name → watchers still waiting for it
  const all: Watcher[] = [];
  const onEvent = (type: string, name: string | undefined, at: number) => {
    if (type === 'BOOKMARK' || name === undefined) return;
    const t0 = sentAt.get(name);
    if (t0 === undefined) return;
    latencies.push(at - t0);
    pending.set(name, (pending.get(name) ?? 0) - 1);
  };
  try {
    const t0 = performance.now();
    let next = 0;
    let failed: unknown;
    const opener = async () => {
      while (next < o.watchers && failed === undefined) {
        const w = new Watcher(spread[next % spread.length], onEvent);
        next++;
        all.push(w);
        try {
          await w.open(o.watchPath);
        } catch (err) {
          failed ??= err;
        }
      }
    };
    const timeout = setTimeout(() => (failed ??= new Error(`${target.name}: watchers not established within ${OPEN_TIMEOUT_MS} ms`)), OPEN_TIMEOUT_MS);
    await Promise.race([
      Promise.all(Array.from({ length: Math.min(o.openConcurrency, o.watchers) }, opener)),
      new Promise<void>((r) => setTimeout(r, OPEN_TIMEOUT_MS + 100).unref()),
    ]);
    clearTimeout(timeout);
    // Rethrows what failed, whatever its type.
    if (failed !== undefined) throw failed as unknown;
    const establish = (performance.now() - t0) / 1000;
    progress(`${target.name}: ${o.watchers} watchers established in ${establish.toFixed(1)}s`);
    await sleep(500); // let the handshake burst settle before timing anything

    const writes: Promise<void>[] = [];
    for (let k = 0; k < o.writes; k++) {
      const name = o.objectName(k);
      pending.set(name, o.watchers);
      sentAt.set(name, performance.now());
      const w = o.write(k);
      w.catch(() => undefined); // awaited below; meanwhile a failure must not count as unhandled
      writes.push(w);
      await sleep(o.intervalMs);
    }
    await Promise.all(writes);
    const deadline = performance.now() + o.drainMs;
    while (performance.now() < deadline && [...pending.values()].some((n) => n > 0)) await sleep(50);
    return { watchers: o.watchers, establishSeconds: establish, writes: o.writes, latencies };
  } finally {
    for (const w of all) w.close();
  }
}
