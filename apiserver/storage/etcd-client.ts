import { readFile } from 'node:fs/promises';
import { rootCertificates } from 'node:tls';
import { castGrpcError, Etcd3, isRecoverableError, type IOptions } from 'etcd3';
import { ClusterIdentity } from './etcd-identity';
import { StorageError } from './storage';

/** How to reach the etcd cluster (kube-apiserver's --etcd-servers, --etcd-cafile, --etcd-certfile, --etcd-keyfile). */
export interface EtcdConnectOptions {
  /** Client URLs, all http:// or all https:// (etcd3 refuses a mix). */
  endpoints: string[];
  /** PEM CA bundle that signed the etcd server certificates (default: the system roots, for https). */
  caFile?: string;
  /** PEM client certificate and key presented to etcd (both or neither). */
  certFile?: string;
  keyFile?: string;
  /** Every key is stored under this prefix, like kube-apiserver's --etcd-prefix (default "/registry-svc"). */
  prefix?: string;
  /** Deadline of each unary etcd call, so a partitioned member yields Unavailable, never a hang (default 10 s). */
  requestTimeoutMs?: number;
  /** Largest gRPC message accepted from etcd (default 64 MiB; see etcdChannelOptions). */
  maxReceiveMessageBytes?: number;
  /** Keys fetched per etcd range call when listing (default 1,000; see EtcdStorage.list). */
  rangePageSize?: number;
  /** Told about each endpoint that belongs to another etcd cluster than the rest (it is never used; see ClusterIdentity). */
  onForeignEndpoint?: (endpoint: string, clusterId: string, expected: string) => void;
}

type FaultPolicy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;
type ChannelOptions = NonNullable<IOptions['grpcOptions']>;

/**
 * gRPC channel settings, chosen deliberately rather than inherited:
 * - grpc.max_receive_message_length: grpc-js refuses any response over 4 MiB by default, and one
 *   etcd range over a few thousand objects exceeds that. Lists are paged as well (rangePageSize keys
 *   per call, see EtcdStorage.list), so this limit only has to fit one page: 64 MiB holds a page of
 *   1,000 objects of 64 KiB. A page that is still too large (big objects) is fetched again in
 *   halves, and since etcd caps a value at 1.5 MiB (--max-request-bytes), one object always fits.
 * - Reconnect backoff capped at 2 s (grpc-js default grows to 120 s), so a restarted member is used
 *   again within seconds. (etcd3 also drops a host's channels after a transport error, see below.)
 * - Keepalive pings every 30 s on open streams notice a silently dead peer (etcd's default
 *   --grpc-keepalive-min-time is 5 s, so this never counts as abuse; none are sent without calls).
 */
export function etcdChannelOptions(maxReceiveMessageBytes: number): ChannelOptions {
  return {
    'grpc.max_receive_message_length': maxReceiveMessageBytes,
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2000,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
  };
}

/**
 * Builds the etcd3 client. Its fault handling is replaced on purpose:
 * - etcd3's default per-host circuit breaker opens for 5 s after three consecutive failures and
 *   then refuses every call, even to a healthy, restarted etcd; one oversize range or a short outage
 *   would make the API server fail requests it could serve. The host policy here passes through.
 * - etcd3's default global policy retries every "recoverable" error three times, which for a txn
 *   whose reply was lost could apply a create twice (the second reporting AlreadyExists for the
 *   caller's own write). Here a call is retried, on the next endpoint, only when it provably never
 *   left this process (no connection could be established), like clientv3's safe-retry rule for
 *   mutations; anything else is reported to the caller as Unavailable.
 */
export async function newEtcdClient(o: EtcdConnectOptions): Promise<Etcd3> {
  if (o.endpoints.length === 0) throw new Error('etcd: at least one endpoint is required');
  for (const e of o.endpoints) {
    if (!/^https?:\/\/[^/]+\/?$/.test(e)) throw new Error(`etcd: endpoint ${JSON.stringify(e)} is not http(s)://host:port`);
  }
  if (!o.certFile !== !o.keyFile) throw new Error('etcd: --etcd-certfile and --etcd-keyfile must be given together');
  const secure = o.endpoints.some((e) => e.startsWith('https:'));
  if (!secure && (o.caFile || o.certFile)) throw new Error('etcd: TLS files were given but the endpoints are http://');
  let credentials: IOptions['credentials'];
  if (secure && (o.caFile || o.certFile)) {
    credentials = {
      rootCertificate: o.caFile ? await readFile(o.caFile) : Buffer.from(rootCertificates.join('\n')),
      ...(o.certFile ? { certChain: await readFile(o.certFile), privateKey: await readFile(o.keyFile as string) } : {}),
    };
  }
  const timeout = o.requestTimeoutMs ?? 10_000;
  const hosts = o.endpoints.map((e) => e.replace(/\/$/, ''));
  const grpcOptions = etcdChannelOptions(o.maxReceiveMessageBytes ?? 64 * 1024 * 1024);
  // Each endpoint's cluster ID is asked on a client of its own (one host, no retries, short deadline).
  const probe = async (host: string): Promise<string> => {
    const one = new Etcd3({
      hosts: [host],
      credentials,
      grpcOptions,
      defaultCallOptions: () => ({ deadline: Date.now() + Math.min(timeout, 2000) }),
      faultHandling: { host: () => passThrough(), global: passThrough() },
    });
    try {
      return String((await one.maintenance.status()).header.cluster_id);
    } finally {
      one.close();
    }
  };
  const identity = new ClusterIdentity(hosts, probe, Date.now, o.onForeignEndpoint);
  return new Etcd3({
    hosts,
    credentials,
    grpcOptions,
    // Streams (watches) live until cancelled; every unary call gets the deadline.
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
    faultHandling: {
      host: (host) => sameCluster(identity, host),
      // Every endpoint once, plus one: a channel dropped after a failure elsewhere rejects the
      // calls queued on it unsent, and the retry gets a fresh channel.
      global: retryUnsent(o.endpoints.length + 1),
    },
  });
}

/**
 * The per-host policy: a call goes to host only once its cluster ID is known to be the cluster's
 * (ClusterIdentity.admit throws before anything is sent otherwise, and etcd3 then tries the next
 * host); after a transport failure the host's ID is probed again before its next call.
 */
function sameCluster(identity: ClusterIdentity, host: string): FaultPolicy {
  return policy(async (fn, signal) => {
    await identity.admit(host);
    try {
      return await fn({ signal });
    } catch (e) {
      if (e instanceof Error && isRecoverableError(castGrpcError(e))) identity.forget(host);
      throw e;
    }
  });
}

/** A cockatiel-compatible policy that just runs the call (typed through etcd3's options, not cockatiel). */
function passThrough(): FaultPolicy {
  return policy(async (fn, signal) => fn({ signal }));
}

/** Retries, up to attempts calls in all, only errors that prove the request was never sent. */
function retryUnsent(attempts: number): FaultPolicy {
  return policy(async (fn, signal) => {
    for (let i = 1; ; i++) {
      try {
        return await fn({ signal });
      } catch (e) {
        if (i >= attempts || !neverSent(e)) throw e;
      }
    }
  });
}

function policy(run: <T>(fn: (ctx: { signal: AbortSignal }) => PromiseLike<T> | T, signal: AbortSignal) => Promise<T>): FaultPolicy {
  const none = () => ({ dispose: () => undefined });
  return {
    _altReturn: undefined as never,
    onSuccess: none,
    onFailure: none,
    execute: (fn, signal) => run(fn, signal ?? new AbortController().signal),
  };
}

/** grpc-js fails calls that were never written to a transport with this text; safe to retry anywhere. */
function neverSent(e: unknown): boolean {
  return e instanceof Error && /No connection established|Channel closed before call started/.test(e.message);
}

/**
 * Maps an etcd3/gRPC failure onto the Storage error codes. etcd reports a compacted or future
 * revision as gRPC OUT_OF_RANGE with its mvcc error text (ErrCompacted, ErrFutureRev); every other
 * failure (connection refused, deadline, member without leader, closed client, oversize message)
 * means the store could not serve the call: Unavailable.
 */
export function storageErrorOf(e: unknown): StorageError {
  if (e instanceof StorageError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  if (msg.includes('required revision has been compacted')) return new StorageError('Compacted', `etcd: ${msg}`);
  if (msg.includes('required revision is a future revision')) return new StorageError('FutureRevision', `etcd: ${msg}`);
  return new StorageError('Unavailable', `etcd: ${msg}`);
}

/** A response grpc-js refused as over grpc.max_receive_message_length (the caller may ask for less). */
export function isMessageTooLarge(e: unknown): boolean {
  return e instanceof Error && /Received message larger than max/.test(e.message);
}
