/**
 * Runs a task on a cron schedule (node-cron, five or six fields, the agent's local time zone) until
 * a signal aborts. Runs never overlap: a round still busy when the next one is due is skipped.
 */
import type { Log } from '../platform/logger';

/** node-cron is loaded only when a schedule is used (config/cron-expression.ts checks expressions). */
function cronLib(): typeof import('node-cron') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: node-cron stays out of the agent's memory until a schedule is used
  return require('node-cron') as typeof import('node-cron');
}

export interface CronJobOptions {
  name: string;
  schedule: string;
  task: () => Promise<unknown>;
  log: Log;
}

export class CronJob {
  constructor(private readonly o: CronJobOptions) {}

  /** Schedules the task and resolves once the signal aborts and the schedule is stopped. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const task = cronLib().createTask(
      this.o.schedule,
      async () => {
        try {
          await this.o.task();
        } catch (e) {
          this.o.log.warn({ job: this.o.name, error: (e as Error).message }, 'scheduled job failed');
        }
      },
      {
        name: this.o.name,
        noOverlap: true,
        // node-cron's own notes (missed or overlapping runs) go to our log, not the console.
        logger: {
          info: (m) => this.o.log.debug({ job: this.o.name }, m),
          warn: (m) => this.o.log.warn({ job: this.o.name }, m),
          error: (m) => this.o.log.warn({ job: this.o.name, error: m instanceof Error ? m.message : m }, 'cron error'),
          debug: () => undefined,
        },
      },
    );
    await task.start();
    this.o.log.info({ job: this.o.name, schedule: this.o.schedule, next: task.getNextRun()?.toISOString() }, 'scheduled job');
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await task.destroy();
  }
}
