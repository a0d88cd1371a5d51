import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../api/errors';
import type { UserInfo } from '../api/user';
import { proxyRequest, type ProxyClientIdentity } from './proxy';
import type { RemoteApi, RemoteApis, RemoteState } from './remote-apis';
import { resolveTarget, unresolved, type ServiceLookup } from '../registry/service-resolver';

/** What the HTTP server needs to serve remote group versions: the table, how to find servers, and the identity to present. */
export interface Aggregator {
  remote: RemoteApis;
  lookup: ServiceLookup;
  identity: ProxyClientIdentity;
}

/**
 * Serves an authenticated, authorized request for a remote group version by proxying it to its
 * server; 503 ServiceUnavailable when the APIService is not available or its server cannot be
 * found or reached (upstream's aggregator answers the same).
 */
export async function proxyToRemote(
  req: IncomingMessage,
  res: ServerResponse,
  remote: { api: RemoteApi; state: RemoteState },
  user: UserInfo,
  agg: Aggregator,
  signal: AbortSignal,
): Promise<void> {
  const target = await resolveTarget(remote.api.service, agg.lookup);
  if (unresolved(target)) throw new ApiError('ServiceUnavailable', `service unavailable: ${target.message}`);
  await proxyRequest(req, res, remote.api, target, user, agg.identity, signal);
}
