import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { loadWebhookClientConfig, WebhookClient } from '../authn/webhook-client-config';
import type { ApiServerFlags } from '../config/flags';
import { Auditor, type AuditBackend } from '../filters/audit/auditor';
import { LogBackend } from '../filters/audit/log-backend';
import { AuditPolicyError, parseAuditPolicy } from '../filters/audit/policy';
import { WebhookBackend } from '../filters/audit/webhook-backend';
import type { ApiMetrics } from '../metrics/registry';
import { maxNestingDepth } from '../patch/json-bounds';
import { decodeCbor } from '../codec/cbor-decode';
import { CBOR_MEDIA_TYPE } from '../codec/cbor-wire';
import { decodeObject, PROTOBUF_MEDIA_TYPE } from '../codec/envelope';
import type { BinaryBodyDecoder } from '../filters/audit/request-audit';
import type { ResourceRegistry } from '../registry/builtin';

/** Upstream's audit webhook timeout per batch. */
const WEBHOOK_TIMEOUT_MS = 30_000;

/**
 * The audit pipeline of --audit-policy-file and its backends, or undefined when there is no policy
 * or no backend (upstream audits nothing then). A policy or webhook file that cannot be read stops
 * the server (AuditPolicyError / WebhookConfigError naming the file and field).
 */
export function buildAuditor(flags: Pick<ApiServerFlags, 'audit'>, metrics: ApiMetrics | undefined, log: Logger, registry?: ResourceRegistry): Auditor | undefined {
  const a = flags.audit;
  if (!a.policyFile) return undefined;
  let text: string;
  try {
    text = readFileSync(a.policyFile, 'utf8');
  } catch (err) {
    throw new AuditPolicyError(`${a.policyFile}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const policy = parseAuditPolicy(text, a.policyFile);
  const counters = metrics?.audit();
  const failed = (plugin: string) => (count: number, err?: unknown) => {
    counters?.error(plugin, count);
    log.warn({ plugin, count, err: err instanceof Error ? err.message : undefined }, 'audit events lost');
  };
  const backends: AuditBackend[] = [];
  if (a.logPath) backends.push(new LogBackend({ path: a.logPath, maxSizeMB: a.logMaxSizeMB, maxBackups: a.logMaxBackups, maxAgeDays: a.logMaxAgeDays, onError: failed('log') }));
  if (a.webhookConfigFile) {
    const client = new WebhookClient(loadWebhookClientConfig(a.webhookConfigFile), WEBHOOK_TIMEOUT_MS);
    backends.push(
      new WebhookBackend({
        post: (body) => client.postStatus(body),
        maxBatchSize: a.webhookBatchMaxSize,
        maxWaitMs: a.webhookBatchMaxWaitMs,
        bufferSize: a.webhookBufferSize,
        initialBackoffMs: a.webhookInitialBackoffMs,
        onError: failed('webhook'),
      }),
    );
  }
  if (!backends.length) return undefined;
  return new Auditor(policy, backends, counters, undefined, registry ? binaryBodies(registry) : undefined);
}

/** Protobuf and CBOR request bodies decoded with their kind's schema, so the log shows them as JSON (as upstream). */
function binaryBodies(registry: ResourceRegistry): BinaryBodyDecoder {
  return (body, contentType, info) => {
    const t = registry.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!t) return undefined;
    if (contentType.startsWith(PROTOBUF_MEDIA_TYPE)) return decodeObject(t.schema, body);
    if (contentType.startsWith(CBOR_MEDIA_TYPE)) return decodeCbor(body, t.schema, { maxDepth: maxNestingDepth });
    return undefined;
  };
}
