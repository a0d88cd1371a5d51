/**
 * inotify (fs.watch) on a changing set of directories; any event only wakes the registry, which
 * then rescans: events say little reliable about what changed (and can be lost when the queue
 * overflows), the scan says what is there.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Log } from '../platform/logger';

export class DirWatcher {
  private readonly watchers = new Map<string, FSWatcher>();

  constructor(
    private readonly onEvent: () => void,
    private readonly log: Log,
  ) {}

  /** Watches exactly `dirs` from now on (new ones added, vanished ones dropped). Never throws. */
  sync(dirs: readonly string[]): void {
    const want = new Set(dirs);
    for (const [d, w] of this.watchers) {
      if (!want.has(d)) {
        w.close();
        this.watchers.delete(d);
      }
    }
    for (const d of want) {
      if (this.watchers.has(d)) continue;
      try {
        const w = watch(d, { persistent: false }, () => this.onEvent());
        w.on('error', () => {
          // The directory went away (or the watch broke): drop it; the next scan decides again.
          w.close();
          if (this.watchers.get(d) === w) this.watchers.delete(d);
          this.onEvent();
        });
        this.watchers.set(d, w);
      } catch (e) {
        this.log.debug({ dir: d, error: (e as Error).message }, 'cannot watch plugin directory; relying on rescans');
      }
    }
  }

  close(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}
