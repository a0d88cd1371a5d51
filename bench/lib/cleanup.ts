import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { progress } from './progress';

/**
 * What a benchmark run must undo however it ends (normal end, thrown error, SIGINT/SIGTERM, the
 * overall deadline): child processes it started and temp dirs it made. Undo steps run last-first.
 */
export class Cleanup {
  private readonly steps: Array<{ what: string; run: () => Promise<void> | void }> = [];
  private readonly children = new Set<ChildProcess>();
  private readonly dirs = new Set<string>();

  /** Registers an async undo step (e.g. a graceful stop); it runs once, in reverse order of registration. */
  add(what: string, run: () => Promise<void> | void): void {
    this.steps.push({ what, run });
  }

  /** A child process to SIGKILL if still alive at the end (also on process exit, synchronously). */
  child(proc: ChildProcess): void {
    this.children.add(proc);
  }

  /** A directory to remove recursively at the end (also on process exit). */
  dir(path: string): void {
    this.dirs.add(path);
  }

  /** Runs every undo step, then kills leftover children and removes the dirs; never throws. */
  async runAll(): Promise<void> {
    while (this.steps.length > 0) {
      const s = this.steps.pop()!;
      try {
        await s.run();
      } catch (err) {
        progress(`cleanup: ${s.what} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    this.final();
  }

  /** The synchronous last resort, safe in a process 'exit' handler. */
  final(): void {
    for (const p of this.children) {
      if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    }
    this.children.clear();
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
    this.dirs.clear();
  }
}
