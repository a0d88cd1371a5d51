/**
 * The check of a cron expression (node-cron: five or six fields, the agent's local time zone), a
 * config validator: it sits in config/ so the schema depends on nothing above it, and
 * housekeeping/cron-job.ts runs what it accepts.
 */

/** Why a cron expression is invalid, or undefined when it is valid. node-cron is loaded only when a schedule is checked. */
export function cronProblem(expression: string): string | undefined {
  if (expression.trim() === '') return 'invalid value "": must be a cron expression such as "*/10 * * * *"';
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: node-cron stays out of the agent's memory until a schedule is checked
  const cron = require('node-cron') as typeof import('node-cron');
  const v = cron.validateDetailed(expression);
  if (v.valid) return undefined;
  const why = v.errors.map((e) => `${e.field}${e.value !== undefined ? ` ${JSON.stringify(e.value)}` : ''}: ${e.message}`).join('; ');
  return `invalid cron expression ${JSON.stringify(expression)}${why ? ` (${why})` : ''}`;
}
