/**
 * The agent's logger: pino, one JSON line per event on stdout (journald keeps it), level from
 * --log-level or --v. Secrets never reach the output: known secret fields are redacted by path,
 * and strings that look like bootstrap tokens or bearer credentials are scrubbed from messages.
 */
import pino from 'pino';
import type { LogLevel } from '../config/types';

/** The logging surface platform code depends on; a pino Logger satisfies it. */
export interface Log {
  /** Records a debug event; never throws. */
  debug(obj: object, msg: string): void;
  /** Records an info event; never throws. */
  info(obj: object, msg: string): void;
  /** Records a warning; never throws. */
  warn(obj: object, msg: string): void;
  /** Records an error; never throws. */
  error(obj: object, msg: string): void;
}

/** Field names whose values are secrets wherever they appear (up to three levels deep). */
const secretKeys = [
  'token',
  'bearerToken',
  'password',
  'key',
  'privateKey',
  'keyData',
  'clientKeyData',
  '["client-key-data"]',
  'tokenSecret',
  '["token-secret"]',
  'authorization',
  'Authorization',
  'cookie',
  'secret',
];

/** pino redact paths: each secret key at depth 0-3, plus Secret data of bootstrap tokens and request headers. */
export function redactPaths(): string[] {
  const out: string[] = [];
  for (const k of secretKeys) {
    const seg = k.startsWith('[') ? k : `.${k}`;
    out.push(k.startsWith('[') ? `${k}` : k, `*${seg}`, `*.*${seg}`, `*.*.*${seg}`);
  }
  out.push('headers["proxy-authorization"]', '*.headers["proxy-authorization"]');
  return out;
}

// Bootstrap tokens are "<6 char id>.<16 char secret>" (spec 5.1); the id is public, the secret is not.
const bootstrapTokenRe = /\b([a-z0-9]{6})\.[a-z0-9]{16}\b/g;
const bearerRe = /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/=:]+/gi;

/** Removes token-shaped secrets from free text. */
export function scrubSecrets(text: string): string {
  return text.replace(bootstrapTokenRe, '$1.<redacted>').replace(bearerRe, '$1 <redacted>');
}

export interface LoggerOptions {
  level: LogLevel;
  /** Where lines go; stdout (synchronously) by default. */
  destination?: pino.DestinationStream;
  /** Extra fields on every line. */
  base?: Record<string, unknown>;
}

/** pino's error serializer, with token-shaped text scrubbed from message and stack. */
function serializeError(e: Error): pino.SerializedError {
  const s = pino.stdSerializers.err(e);
  if (typeof s.message === 'string') s.message = scrubSecrets(s.message);
  if (typeof s.stack === 'string') s.stack = scrubSecrets(s.stack);
  return s;
}

/** Creates the agent's root logger; components take children of it. */
export function createLogger(opts: LoggerOptions): pino.Logger {
  return pino(
    {
      name: 'svc-node',
      level: opts.level,
      base: { pid: process.pid, ...opts.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: redactPaths(), censor: '[REDACTED]' },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((a: unknown) => (typeof a === 'string' ? scrubSecrets(a) : a));
          return method.apply(this, cleaned as Parameters<typeof method>);
        },
      },
      serializers: { err: serializeError },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
