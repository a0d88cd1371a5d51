/**
 * The audit pipeline of one API server (issue 23, item 5): the policy, the backends (log file,
 * webhook, or both) and the metrics. begin() starts a request's record when auditing is on.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../../api/user';
import type { RequestInfo } from '../../server/request-info';
import { impersonators } from '../impersonation';
import { decide, type AuditLevel, type AuditPolicy } from './policy';
import { RequestAudit, type AuditEvent, type AuditSink, type BinaryBodyDecoder } from './request-audit';

/** A backend: emit never blocks; flush writes or sends what is buffered (shutdown). */
export interface AuditBackend {
  emit(ev: AuditEvent): void;
  flush(): void | Promise<void>;
}

/** apiserver_audit_event_total, apiserver_audit_level_total{level}, apiserver_audit_error_total{plugin} (upstream's names). */
export interface AuditMetrics {
  event(level: AuditLevel): void;
  error(plugin: string, count: number): void;
}

/** An audit ID a client may set itself (upstream honours Audit-ID), bounded so it cannot bloat the log. */
const CLIENT_AUDIT_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export class Auditor implements AuditSink {
  constructor(
    private readonly policy: AuditPolicy,
    private readonly backends: readonly AuditBackend[],
    private readonly metrics?: AuditMetrics,
    private readonly now: () => Date = () => new Date(),
    private readonly binary?: BinaryBodyDecoder,
  ) {}

  /** Starts a request's record and sets its Audit-Id response header (upstream's). */
  begin(req: IncomingMessage, res: ServerResponse): RequestAudit {
    const given = req.headers['audit-id'];
    const id = typeof given === 'string' && CLIENT_AUDIT_ID.test(given) ? given : randomUUID();
    res.setHeader('Audit-Id', id);
    return new RequestAudit(req, res, id, this.now(), this.now, this, this.binary);
  }

  /** Applies the policy to a request whose user (undefined: authentication failed) and attributes are known. */
  decide(audit: RequestAudit, req: IncomingMessage, user: UserInfo | undefined, info: RequestInfo): void {
    const actual = impersonators.get(req);
    audit.decide(decide(this.policy, actual ?? user, info), user, info, actual);
  }

  emit(ev: AuditEvent): void {
    this.metrics?.event(ev.level);
    for (const b of this.backends) b.emit(ev);
  }

  async flush(): Promise<void> {
    for (const b of this.backends) await b.flush();
  }
}
