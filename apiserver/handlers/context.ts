import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Clock } from '../../common/informer/clock';
import type { Logger } from 'pino';
import { ApiError } from '../api/errors';
import { clampToSafeInteger, INT64_MAX, INT64_MIN, int64TextError, parseInt64 } from '../api/integers';
import { parseFieldSelector, parseLabelSelector } from '../api/selectors';
import type { UserInfo } from '../api/user';
import type { ResourceType } from '../registry/resource-type';
import type { RequestInfo } from '../server/request-info';
import { queryBool } from '../server/request-info';
import { servedBody } from '../server/group-alias';
import { CBOR_GATE } from '../config/flags';
import { hasProtobuf } from '../codec/plan';
import { binaryReply } from '../server/negotiation';
import { protobufSchemaFor, responseSchemaFor } from '../server/protobuf';
import { send, type SendOptions } from '../server/respond';
import type { ListQuery, ObjectStore, WriteContext } from '../store/object-store';
import { selectableFields } from '../store/object-store';
import type { WatchCache } from '../store/watch-cache';

/** Everything one resource request needs; built by the router after authn, authz. */
export interface ResourceRequest {
  req: IncomingMessage;
  res: ServerResponse;
  info: RequestInfo;
  query: URLSearchParams;
  user: UserInfo;
  type: ResourceType;
  store: ObjectStore;
  cache: WatchCache;
  log: Logger;
  /** Ends with the server's shutdown (long-running watches close). */
  signal: AbortSignal;
  now: () => Date;
  /** Feature gates switched on (--feature-gates); absent means each at its default (config/feature-gates.ts gateOn). */
  gates?: ReadonlySet<string>;
  /** One-shot timers (watch timeouts, write deadlines); default real timers. */
  after?: Clock['after'];
  /** Authorizes this request's user for the same attributes with another verb; rejects with 403. */
  authorizeVerb?: (verb: string) => Promise<void>;
  /** The audit event's annotations, when the request is audited: admission's annotations go there (writeContext). */
  auditAnnotations?: Record<string, string>;
  /** Warnings for the client from admission (writeContext hands it over) and deprecation; reply sends them as Warning headers. */
  warnings?: string[];
  /** An HTTP Upgrade request (exec, attach, port-forward, proxied WebSockets): the client's socket and the bytes read past its head; `res` writes to that socket until a handler takes it over. */
  upgrade?: { socket: Duplex; head: Buffer };
}

const protobufForms = new WeakMap<ResourceType, boolean>();

/**
 * Whether the request's type has a protobuf form: custom resources have none, so a protobuf body is
 * 415 and an Accept of protobuf only is 406 for them, as upstream.
 */
export function protobufServed(r: Pick<ResourceRequest, 'type'>): boolean {
  let has = protobufForms.get(r.type);
  if (has === undefined) protobufForms.set(r.type, (has = hasProtobuf(r.type.schema)));
  return has;
}

/** Whether CBOR is served (the CBORServingAndStorage feature gate, alpha, off by default). */
export function cborServed(r: ResourceRequest): boolean {
  return r.gates?.has(CBOR_GATE) ?? false;
}

/**
 * Sends body, spelled in the group the client asked for (servedBody), as protobuf when the client
 * prefers it and the body has a protobuf form, as CBOR when the client prefers that and it is
 * served (every body has a CBOR form; the kind's schema marks its []byte fields), else JSON, or
 * YAML when asked.
 */
export function reply(r: ResourceRequest, status: number, body: unknown, extra: SendOptions = {}): void {
  const served = servedBody(r.info, body);
  const binary = extra.yaml ? undefined : binaryReply(r.req.headers.accept, { cbor: cborServed(r) });
  const protobuf = binary === 'protobuf' ? protobufSchemaFor(r.type, served) : undefined;
  const cbor = binary === 'cbor' ? { schema: responseSchemaFor(r.type, served) } : undefined;
  // Admission may run more than once for one request (a conflict retry): each warning is sent once.
  const warnings = r.warnings?.length ? [...new Set([...(extra.warnings ?? []), ...r.warnings])] : extra.warnings;
  send(r.req, r.res, status, served, { pretty: queryBool(r.query, 'pretty'), protobuf, cbor, ...extra, warnings });
}

/**
 * A refused request still carries the warnings gathered before the refusal (a
 * ValidatingAdmissionPolicy's Warn before another's Deny, a webhook's warnings, a deprecated
 * version's), as upstream's warning recorder writes its headers on every response: they are set on
 * the response for the error reply (sendError) to send with its Status.
 */
export function warnOnError(r: ResourceRequest): void {
  if (!r.warnings?.length || r.res.headersSent) return;
  const earlier = r.res.getHeader('Warning');
  const before = earlier === undefined ? [] : Array.isArray(earlier) ? earlier : [String(earlier)];
  const ours = [...new Set(r.warnings)].map((w) => `299 - ${JSON.stringify(w)}`);
  r.res.setHeader('Warning', [...before, ...ours.filter((w) => !before.includes(w))]);
}

export function listQuery(r: ResourceRequest): ListQuery {
  return {
    labelSelector: parseLabelSelector(r.query.get('labelSelector')),
    fieldSelector: parseFieldSelector(r.query.get('fieldSelector'), selectableFields(r.type)),
    resourceVersion: r.query.get('resourceVersion') ?? undefined,
    resourceVersionMatch: r.query.get('resourceVersionMatch') ?? undefined,
    limit: parseLimit(r.query.get('limit')),
    continue: r.query.get('continue') ?? undefined,
  };
}

/**
 * limit is an int64, as upstream's ListOptions.Limit (strconv.ParseInt: optional sign, decimal
 * digits): anything else, or a value beyond int64, is a 400. A valid limit beyond what a double
 * holds exactly still means "all", so it is clamped to Number.MAX_SAFE_INTEGER: storage binds it
 * as an integer (SQLite refused 1e20 with "datatype mismatch", a 503 clients retried). Zero and
 * negative limits mean no limit, as upstream.
 */
function parseLimit(text: string | null): number | undefined {
  if (text === null || text === '') return undefined;
  const n = parseInt64(text);
  if (n !== undefined) return clampToSafeInteger(n);
  const why = int64TextError(text) === 'value out of range' ? `value out of range: must be between ${INT64_MIN} and ${INT64_MAX}` : 'must be an integer';
  throw new ApiError('BadRequest', `invalid limit "${text}": ${why}`);
}

/** dryRun accepts only All (4.4); anything else is a 400 as upstream. */
export function writeContext(r: ResourceRequest): WriteContext {
  const dry = r.query.getAll('dryRun');
  for (const d of dry) {
    if (d !== 'All') throw new ApiError('BadRequest', `dryRun: Unsupported value: "${d}": supported values: "All"`);
  }
  const fm = r.query.get('fieldManager') ?? undefined;
  if (fm !== undefined && (fm.length > 128 || /[^\x20-\x7e]/.test(fm))) {
    throw new ApiError('BadRequest', 'fieldManager: Invalid value: must be at most 128 printable characters');
  }
  return {
    user: r.user,
    dryRun: dry.length > 0,
    fieldManager: fm,
    userAgent: r.req.headers['user-agent'],
    subresource: r.info.subresource,
    warnings: (r.warnings ??= []),
    auditAnnotations: (r.auditAnnotations ??= {}),
  };
}
