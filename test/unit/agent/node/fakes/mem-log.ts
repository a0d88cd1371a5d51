/** A Log that keeps its lines for assertions. */
import type { Log } from '../../../../../agent/platform/logger';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

export class MemLog implements Log {
  readonly lines: LogLine[] = [];
  debug(obj: object, msg: string): void {
    this.lines.push({ level: 'debug', obj: obj as Record<string, unknown>, msg });
  }
  info(obj: object, msg: string): void {
    this.lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg });
  }
  warn(obj: object, msg: string): void {
    this.lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg });
  }
  error(obj: object, msg: string): void {
    this.lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg });
  }
  /** Lines whose message contains the text. */
  find(text: string): LogLine[] {
    return this.lines.filter((l) => l.msg.includes(text));
  }
}
