import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { AnonymousPolicy } from './anonymous';
import { loadAuthenticationConfiguration, type CompiledJwtAuthenticator, type ValidateOptions } from './authentication-config';
import type { MetricsRegistry } from './metrics';

export const RELOAD_TIMESTAMP_METRIC = 'apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds';
export const RELOADS_TOTAL_METRIC = 'apiserver_authentication_config_controller_automatic_reloads_total';

export interface LoadedAuthenticationConfig {
  jwt: CompiledJwtAuthenticator[];
  anonymous?: AnonymousPolicy;
}

export interface AuthenticationConfigControllerOptions {
  path: string;
  validate: ValidateOptions;
  /** Installs a newly loaded configuration. */
  apply: (c: LoadedAuthenticationConfig) => void;
  metrics: MetricsRegistry;
  now: () => Date;
  log: Logger;
  /** Fallback re-read interval when file events are missed (default 60 s, upstream's check period). */
  pollIntervalMs?: number;
  /** Wait after a file event before reading, so an editor's several writes count as one change (default 100 ms). */
  debounceMs?: number;
}

/**
 * Keeps --authentication-config in force (5.3): loaded once at start (a bad file refuses to start),
 * then re-read when the file changes (file system events on its directory, which also catch the
 * symlink swap of a mounted ConfigMap, plus a periodic re-read). A changed file that fails
 * validation is logged and ignored; the running configuration stays. Each reload attempt of a
 * changed file sets the reload timestamp and count metrics with status success or failure.
 */
export class AuthenticationConfigController {
  private hash = '';
  private readonly timestamp;
  private readonly total;
  private wake: (() => void) | undefined;

  constructor(private readonly o: AuthenticationConfigControllerOptions) {
    this.timestamp = o.metrics.gauge(RELOAD_TIMESTAMP_METRIC, '[ALPHA] Timestamp of the last automatic reload of authentication configuration split by status.');
    this.total = o.metrics.counter(RELOADS_TOTAL_METRIC, '[ALPHA] Total number of automatic reloads of authentication configuration split by status.');
  }

  /** Loads and applies the file; throws AuthenticationConfigError naming the field when it is invalid. */
  loadInitial(): LoadedAuthenticationConfig {
    const c = loadAuthenticationConfiguration(this.o.path, this.o.validate);
    this.hash = digest(c.text);
    const loaded = { jwt: c.jwt, ...(c.anonymous ? { anonymous: c.anonymous } : {}) };
    this.o.apply(loaded);
    return loaded;
  }

  /** Re-reads the file now; applies it when its content changed and is valid. Returns whether a new configuration was applied. */
  reload(): boolean {
    let c;
    try {
      c = loadAuthenticationConfiguration(this.o.path, this.o.validate);
    } catch (err) {
      // Unreadable mid-write or invalid: judge by content so the same bad file is reported once.
      const text = (err as { message?: string }).message ?? '';
      const h = digest(`error:${text}`);
      if (h === this.hash) return false;
      this.hash = h;
      this.record('failure');
      this.o.log.error({ err: text, path: this.o.path }, 'authentication configuration reload failed; keeping the previous configuration');
      return false;
    }
    const h = digest(c.text);
    if (h === this.hash) return false;
    this.hash = h;
    this.o.apply({ jwt: c.jwt, ...(c.anonymous ? { anonymous: c.anonymous } : {}) });
    this.record('success');
    this.o.log.info({ path: this.o.path, jwtAuthenticators: c.jwt.length }, 'authentication configuration reloaded');
    return true;
  }

  private record(status: 'success' | 'failure'): void {
    this.timestamp.set({ status }, this.o.now().getTime() / 1000);
    this.total.inc({ status });
  }

  /** Watches the file until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    let watcher: FSWatcher | undefined;
    const name = basename(this.o.path);
    try {
      watcher = watch(dirname(this.o.path), { persistent: false }, (_ev, file) => {
        if (!file || file === name || file.startsWith('..')) this.wake?.();
      });
      watcher.on('error', (err) => this.o.log.warn({ err }, 'authentication configuration watch failed; relying on periodic re-reads'));
    } catch (err) {
      this.o.log.warn({ err }, 'cannot watch the authentication configuration; relying on periodic re-reads');
    }
    try {
      while (!signal.aborted) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, this.o.pollIntervalMs ?? 60_000);
          const done = () => {
            clearTimeout(t);
            signal.removeEventListener('abort', done);
            this.wake = undefined;
            resolve();
          };
          this.wake = done;
          signal.addEventListener('abort', done, { once: true });
        });
        if (signal.aborted) break;
        await sleepFor(this.o.debounceMs ?? 100, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) break;
        this.reload();
      }
    } finally {
      watcher?.close();
    }
  }
}

function digest(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
