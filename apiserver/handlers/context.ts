import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { ApiError } from '../api/errors';
import { parseFieldSelector, parseLabelSelector } from '../api/selectors';
import type { UserInfo } from '../api/user';
import type { ResourceType } from '../registry/resource-type';
import type { RequestInfo } from '../server/request-info';
import { isTrue } from '../server/request-info';
import { prefersProtobuf } from '../server/negotiation';
import { protobufSchemaFor } from '../server/protobuf';
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
  /** Feature gates switched on (--feature-gates); absent means none. */
  gates?: ReadonlySet<string>;
  /** Authorizes this request's user for the same attributes with another verb; rejects with 403. */
  authorizeVerb?: (verb: string) => Promise<void>;
}

/** Sends body, as protobuf when the client prefers it and the body has a protobuf form (else JSON, or YAML when asked). */
export function reply(r: ResourceRequest, status: number, body: unknown, extra: SendOptions = {}): void {
  const protobuf = !extra.yaml && prefersProtobuf(r.req.headers.accept) ? protobufSchemaFor(r.type, body) : undefined;
  send(r.req, r.res, status, body, { pretty: isTrue(r.query.get('pretty')), protobuf, ...extra });
}

export function listQuery(r: ResourceRequest): ListQuery {
  const limitText = r.query.get('limit');
  let limit: number | undefined;
  if (limitText !== null && limitText !== '') {
    if (!/^-?\d+$/.test(limitText)) throw new ApiError('BadRequest', `invalid limit "${limitText}": must be an integer`);
    limit = Number(limitText);
  }
  return {
    labelSelector: parseLabelSelector(r.query.get('labelSelector')),
    fieldSelector: parseFieldSelector(r.query.get('fieldSelector'), selectableFields(r.type)),
    resourceVersion: r.query.get('resourceVersion') ?? undefined,
    resourceVersionMatch: r.query.get('resourceVersionMatch') ?? undefined,
    limit,
    continue: r.query.get('continue') ?? undefined,
  };
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
  };
}
