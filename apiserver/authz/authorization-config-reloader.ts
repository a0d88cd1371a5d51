import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';
import { parseAuthorizationConfig, type AuthorizerEntry } from './authorization-config';
import type { AuthorizerList } from './authorizer-list';
import type { Authorizer } from './authorizer';

/** Section 8: the configuration is re-read on change, else every 60 s. */
export const CONFIG_RELOAD_INTERVAL_MS = 60_000;

export interface AuthorizationConfigReloaderOptions {
  /** --authorization-config. */
  file: string;
  /** The text the chain was built from, and the webhooks it holds. */
  initial: { text: string; hooks: AuthorizerList['hooks'] };
  /** Where a valid new configuration's authorizers go (the chain). */
  chain: { replace(list: Authorizer[]): void };
  /** Builds the authorizers of parsed entries (throws for an invalid one). */
  build: (entries: readonly AuthorizerEntry[]) => AuthorizerList;
  read: (path: string) => string;
  intervalMs?: number;
  log: Logger;
}

/**
 * Re-reads --authorization-config when the file changes and every interval (section 8): a valid
 * changed configuration replaces the chain's authorizers (and closes the webhooks it replaced);
 * an unreadable or invalid one is logged and the current chain kept, as upstream's reloader does.
 */
export class AuthorizationConfigReloader {
  private text: string;
  private hooks: AuthorizerList['hooks'];
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;

  constructor(private readonly o: AuthorizationConfigReloaderOptions) {
    this.text = o.initial.text;
    this.hooks = o.initial.hooks;
  }

  /** Starts watching; stops when the signal aborts. */
  run(signal: AbortSignal): void {
    const file = this.o.file;
    try {
      this.watcher = watch(file, () => void this.reload());
    } catch (err) {
      this.o.log.warn({ err, file }, 'cannot watch the authorization configuration; reloading every interval only');
    }
    this.timer = setInterval(() => void this.reload(), this.o.intervalMs ?? CONFIG_RELOAD_INTERVAL_MS);
    signal.addEventListener('abort', () => {
      this.watcher?.close();
      clearInterval(this.timer);
    });
  }

  /** Reads the file once and applies it when it changed and is valid. */
  async reload(): Promise<void> {
    const { file, log } = this.o;
    let text: string;
    try {
      text = this.o.read(file);
    } catch (err) {
      log.error({ err, file }, 'reading the authorization configuration failed; keeping the current one');
      return;
    }
    if (text === this.text) return;
    try {
      const built = this.o.build(parseAuthorizationConfig(text, file));
      const old = this.hooks;
      this.o.chain.replace(built.list);
      this.hooks = built.hooks;
      this.text = text;
      log.info({ file, authorizers: built.list.map((z) => z.name) }, 'authorization configuration reloaded');
      await Promise.all(old.map((h) => h.close()));
    } catch (err) {
      log.error({ err: (err as Error).message, file }, 'the changed authorization configuration is invalid; keeping the current one');
    }
  }

  /** Stops watching and releases the current webhooks' connections. */
  async close(): Promise<void> {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    await Promise.all(this.hooks.map((h) => h.close()));
  }
}
