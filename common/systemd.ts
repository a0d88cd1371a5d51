/**
 * sd_notify(3) for both daemons under systemd (Type=notify; WatchdogSec= for the agent).
 *
 * Why the `sd-notify` package: it binds libsystemd's own sd_notify, so the datagram format,
 * abstract-socket NOTIFY_SOCKETs and credential passing are systemd's code, and it has a
 * watchdog call. The `systemd-notify` package spawns /usr/bin/systemd-notify per message (slow,
 * and systemd may attribute the message to the short-lived child, not the agent) and has no
 * watchdog. Every call in the binding passes unset_environment=0, so NOTIFY_SOCKET stays set
 * for the life of the process; nothing here deletes it either.
 */

/** What this module logs through; a pino Logger satisfies it. */
interface Log {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** The agent's channel to systemd. Methods never throw and are no-ops outside systemd. */
export interface SdNotifier {
  /** Sends READY=1: start-up finished (registered and heartbeating). Idempotent. */
  ready(): void;
  /** Sends STATUS=<text> (one line; newlines become spaces) shown by systemctl status. */
  status(text: string): void;
  /** Sends WATCHDOG=1, one keep-alive. */
  watchdog(): void;
  /** Sends STOPPING=1: shutdown began. */
  stopping(): void;
  /** WatchdogSec in ms when systemd asked this process for keep-alives, else undefined. */
  watchdogIntervalMs(): number | undefined;
}

/** The part of the sd-notify binding used (sd_notify(0, state) underneath). */
export interface SdNotifyBinding {
  sendState(state: string): void;
  watchdog(): void;
}

/**
 * Reads WATCHDOG_USEC / WATCHDOG_PID as sd_watchdog_enabled(0, ...) does: enabled when USEC is a
 * positive integer and PID is unset or equals this process (so a child that inherits the
 * environment does not think the watchdog is its job).
 */
export function watchdogIntervalFromEnv(env: NodeJS.ProcessEnv, pid: number): number | undefined {
  const usecText = env['WATCHDOG_USEC'];
  if (usecText === undefined || !/^\d+$/.test(usecText)) return undefined;
  const usec = Number(usecText);
  if (usec <= 0) return undefined;
  const pidText = env['WATCHDOG_PID'];
  if (pidText !== undefined && pidText !== '' && Number(pidText) !== pid) return undefined;
  return Math.floor(usec / 1000);
}

/** Used when NOTIFY_SOCKET is unset (not started by systemd with Type=notify). */
export class NoopNotifier implements SdNotifier {
  ready(): void {}
  status(): void {}
  watchdog(): void {}
  stopping(): void {}
  watchdogIntervalMs(): number | undefined {
    return undefined;
  }
}

const oneLine = (text: string) => text.replace(/[\r\n]+/g, ' ');

/** SdNotifier over the sd-notify binding. */
export class SystemdNotifier implements SdNotifier {
  constructor(
    private readonly binding: SdNotifyBinding,
    private readonly env: NodeJS.ProcessEnv,
    private readonly pid: number,
    private readonly log?: Log,
  ) {}

  private send(state: string): void {
    try {
      this.binding.sendState(state);
    } catch (e) {
      this.log?.warn({ err: e, state }, 'sd_notify failed');
    }
  }
  ready(): void {
    this.send('READY=1');
  }
  status(text: string): void {
    this.send('STATUS=' + oneLine(text));
  }
  watchdog(): void {
    try {
      this.binding.watchdog();
    } catch (e) {
      this.log?.warn({ err: e }, 'sd_notify WATCHDOG=1 failed');
    }
  }
  stopping(): void {
    this.send('STOPPING=1');
  }
  watchdogIntervalMs(): number | undefined {
    return watchdogIntervalFromEnv(this.env, this.pid);
  }
}

export interface NotifierOptions {
  env?: NodeJS.ProcessEnv;
  pid?: number;
  log?: Log;
  /** Loads the native binding; tests inject a fake. */
  loadBinding?: () => SdNotifyBinding;
}

/**
 * The notifier for this process: systemd's when NOTIFY_SOCKET is set, else a no-op. Throws when
 * NOTIFY_SOCKET is set but the native binding cannot load: under Type=notify systemd would
 * otherwise kill the agent at TimeoutStartSec with no explanation.
 */
export function createSdNotifier(opts: NotifierOptions = {}): SdNotifier {
  const env = opts.env ?? process.env;
  if (!env['NOTIFY_SOCKET']) return new NoopNotifier();
  // Loaded lazily so agents outside systemd never load the native module.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (see above): the native module loads only under systemd
  const load = opts.loadBinding ?? (() => require('sd-notify') as SdNotifyBinding);
  let binding: SdNotifyBinding;
  try {
    binding = load();
  } catch (e) {
    throw new Error(`NOTIFY_SOCKET is set but the sd-notify binding failed to load: ${(e as Error).message}`, { cause: e });
  }
  return new SystemdNotifier(binding, env, opts.pid ?? process.pid, opts.log);
}
