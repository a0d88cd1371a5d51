import { gateOn } from '../config/feature-gates';
import { realClock } from '../../common/informer/clock';
import { StreamWriter } from '../../common/stream-writer';
import { ApiError } from '../api/errors';
import type { KObject } from '../api/types';
import { encodeCborWatchEvent } from '../codec/cbor-encode';
import { CBOR_SEQ_MEDIA_TYPE } from '../codec/cbor-wire';
import type { CachedEncoding } from '../codec/encoded-cache';
import { encodeWatchFrame, PROTOBUF_MEDIA_TYPE } from '../codec/envelope';
import { hasProtobuf } from '../codec/plan';
import { statusSchema } from '../registry/meta-schemas';
import { servedError, servedEventObject } from '../server/group-alias';
import { cachedStandIns, readsOf } from '../server/protobuf';
import { queryBool } from '../server/request-info';
import { negotiate, type Rendering } from '../server/negotiation';
import { toTable } from '../server/table';
import { collectionPrefix, objectKey } from '../store/keys';
import { parseRv } from '../store/read-plan';
import { servedEvent, servedEventAsync } from '../store/stored-object';
import type { CachedEvent } from '../store/watch-cache';
import { cborServed, listQuery, type ResourceRequest, protobufServed } from './context';

/** Upstream picks a watch's lifetime at random in [minRequestTimeout, 2×minRequestTimeout) so watches do not all reconnect at once. */
const MIN_REQUEST_TIMEOUT_S = 1800;
/** The longest watch: the end of the server's own range (timeoutSeconds beyond it is clamped). */
export const MAX_WATCH_TIMEOUT_S = 2 * MIN_REQUEST_TIMEOUT_S;
const BOOKMARK_EVERY_MS = 60_000;
/**
 * The annotation on the BOOKMARK that ends the initial events of a streaming list (4.7):
 * client-go's reflector (WatchListClient) waits for exactly this key, as upstream's cacher sets it.
 */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
/** The same mark under the svc.io domain, which svc's own clients read; both are sent. */
export const SVC_INITIAL_EVENTS_END = 'svc.io/initial-events-end';

/**
 * GET with watch=1 (6.1): a chunked stream of {type, object} JSON documents (or protobuf frames,
 * or with the CBORServingAndStorage gate a CBOR Sequence). Start semantics of 4.6 (unset/0:
 * synthetic ADDED for existing objects; n: changes after n), bookmarks, streaming lists
 * (sendInitialEvents), timeoutSeconds, and 410 as an ERROR event when history is gone.
 */
export async function handleWatch(r: ResourceRequest): Promise<void> {
  const rendering = negotiate(r.req.headers.accept, {
    tableAllowed: true,
    includeObject: r.query.get('includeObject') ?? undefined,
    protobuf: protobufServed(r),
    cbor: cborServed(r),
    watch: true,
  });
  const q = listQuery(r);
  if (r.info.name) {
    // Watch of one object through its path: the same as a metadata.name field selector.
    q.fieldSelector = [...q.fieldSelector, { key: 'metadata.name', operator: '=', values: [r.info.name] }];
  }
  const bookmarks = queryBool(r.query, 'allowWatchBookmarks');
  const rvText = q.resourceVersion ?? '';
  const sendInitial = initialEventsAsked(r, q, bookmarks);
  // The end-of-initial-events bookmark is sent only when the client asked with sendInitialEvents.
  const initialEventsEnd = r.query.get('sendInitialEvents') !== null && sendInitial;
  const timeoutS = watchTimeoutSeconds(r.query.get('timeoutSeconds'));
  const ns = r.info.namespace;
  const prefix = r.info.name && !r.type.namespaced ? objectKey(r.type, ns, r.info.name) : collectionPrefix(r.type, ns);
  // The start: a consistent list for synthetic ADDED events, else the given version.
  let initial: KObject[] = [];
  let from: number;
  // Initial events in protobuf are stored versions: their messages may come from (and go to) the
  // cache of encoded versions, as a protobuf list's items (EncodedCache).
  const cached = rendering.kind === 'protobuf' && hasProtobuf(r.type.schema) ? readsOf(r.store, r.type, false, r.info.servedGroup) : undefined;
  if (sendInitial) {
    const list = await r.store.list(r.type, ns, {
      ...q,
      ...(cached ? { stored: cachedStandIns(r.store, r.info.servedGroup) } : {}),
      limit: undefined,
      continue: undefined,
      resourceVersion: rvText === '' ? undefined : rvText,
      resourceVersionMatch: rvText === '' || rvText === '0' ? undefined : 'NotOlderThan',
    });
    initial = list.items;
    from = Number(list.metadata.resourceVersion);
  } else {
    from = rvText === '' || rvText === '0' ? r.cache.currentRevision() : parseRv(rvText);
  }

  const res = r.res;
  // Upstream marks a protobuf watch ;stream=watch (length-prefixed frames), answers a CBOR one
  // (asked for as application/cbor by client-go) as application/cbor-seq; JSON stays application/json.
  const contentType = rendering.kind === 'protobuf' ? `${PROTOBUF_MEDIA_TYPE};stream=watch` : rendering.kind === 'cbor' ? CBOR_SEQ_MEDIA_TYPE : 'application/json';
  res.writeHead(200, { 'Content-Type': contentType, 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  // The watch ends with the server (shutdown), its timeout, or its connection (close, error, reset,
  // or a peer that takes nothing for the write deadline): the writer aborts then.
  const ac = new AbortController();
  const stop = () => ac.abort();
  r.signal.addEventListener('abort', stop, { once: true });
  const cancelTimeout = (r.after ?? realClock.after)(timeoutS * 1000, stop);
  const out = new StreamWriter(res, { signal: ac.signal, ...(r.after ? { after: r.after } : {}) });
  out.signal.addEventListener('abort', stop, { once: true });
  let lastRv = from;
  let last: string | Buffer | undefined;
  const bookmarkTimer = bookmarks ? setInterval(() => out.offer(bookmark(r, rendering, lastRv)), BOOKMARK_EVERY_MS) : undefined;
  try {
    for (const obj of initial) if (!(await out.write(encode(r, rendering, 'ADDED', obj, cached)))) return;
    initial = []; // sent: not held for the life of the watch
    if (initialEventsEnd) {
      if (!(await out.write(bookmark(r, rendering, from, { [INITIAL_EVENTS_END]: 'true', [SVC_INITIAL_EVENTS_END]: 'true' })))) return;
    }
    for await (const stored of r.cache.watch(prefix, from, ac.signal)) {
      lastRv = stored.revision;
      const ev = r.type.converter ? await servedEventAsync(r.type, stored) : servedEvent(r.type, stored);
      const type = visibleType(r, ev, q);
      if (!type) continue;
      // The plain JSON line is of the stored form: k8s.io names and storedAs views get their own.
      const cachedForm = type === ev.type && rendering.kind === 'json' && !r.info.servedGroup && !r.type.storedAs && !r.type.readDefaults && !r.type.pruneOnRead;
      const chunk = cachedForm ? plainEvent(r, ev) : sharedEvent(r, rendering, type, ev, cached);
      if (!(await out.write(chunk))) break;
    }
  } catch (err) {
    if (err instanceof ApiError) {
      const status = (servedError(r.info, err) as ApiError).toStatus();
      if (rendering.kind === 'protobuf') last = encodeWatchFrame('ERROR', statusSchema, status);
      else if (rendering.kind === 'cbor') last = encodeCborWatchEvent('ERROR', statusSchema, status);
      else last = JSON.stringify({ type: 'ERROR', object: status }) + '\n';
    }
    else r.log.error({ err }, 'watch failed');
  } finally {
    cancelTimeout();
    if (bookmarkTimer) clearInterval(bookmarkTimer);
    r.signal.removeEventListener('abort', stop);
    out.end(last);
  }
}

/**
 * The watch's lifetime from timeoutSeconds (seconds, a non-negative integer). Unset or 0: the
 * server's own, random in [minRequestTimeout, 2×minRequestTimeout) as upstream's. Longer than that
 * range's end is clamped to it (upstream takes any int64; a timer cannot, and a watch that long
 * only delays its client's next resume).
 */
export function watchTimeoutSeconds(text: string | null): number {
  if (text === null || text === '') return MIN_REQUEST_TIMEOUT_S * (1 + Math.random());
  if (!/^\d+$/.test(text)) throw new ApiError('BadRequest', `timeoutSeconds: Invalid value: "${text}": must be a non-negative integer`);
  const s = Number(text);
  if (s === 0) return MIN_REQUEST_TIMEOUT_S * (1 + Math.random());
  return Math.min(s, MAX_WATCH_TIMEOUT_S);
}

/** With selectors, an object that stops matching is DELETED for this watcher, one that starts matching ADDED (as upstream's cacher). */
function visibleType(r: ResourceRequest, ev: CachedEvent, q: Parameters<ResourceRequest['store']['selects']>[2]): CachedEvent['type'] | undefined {
  const now = r.store.selects(r.type, ev.object, q);
  if (ev.type !== 'MODIFIED' || !ev.prevObject) return now ? ev.type : undefined;
  const before = r.store.selects(r.type, ev.prevObject, q);
  if (now && before) return 'MODIFIED';
  if (now) return 'ADDED';
  if (before) return 'DELETED';
  return undefined;
}

function plainEvent(r: ResourceRequest, ev: CachedEvent): string {
  return `{"type":"${ev.type}","object":${r.cache.render(ev)}}\n`;
}

/**
 * The event's chunk in a form other than the plain JSON one, made once per form and event and
 * shared by every watcher of that form (WatchCache.rendering): its encoding, the type this watcher
 * sees (a selector may turn MODIFIED into ADDED or DELETED) and the group name it asked under. A
 * Table depends on more (the request's columns options) and is made for each watcher. The object
 * of an ADDED or MODIFIED event is the stored version at the event's revision: its protobuf
 * message goes to (or comes from) the cache of encoded versions, so the first protobuf get or list
 * of what a protobuf watcher was sent copies it. A DELETED event's object carries the deletion's
 * revision, which names no stored version: it is not cached.
 */
function sharedEvent(r: ResourceRequest, rendering: Rendering, type: string, ev: CachedEvent, cached: CachedEncoding | undefined): string | Buffer {
  if (rendering.kind === 'table') return encode(r, rendering, type, ev.object);
  const versions = ev.type === 'DELETED' ? undefined : cached;
  // The served type is part of the key: the events of a type served from another's storage
  // (storedAs: events.svc.io/v1 over core/v1 Events) are the same stored events in another form.
  const key = `${rendering.kind} ${type} ${r.info.servedGroup ?? ''} ${r.type.group}/${r.type.version}/${r.type.resource}`;
  return r.cache.rendering(ev, key, () => encode(r, rendering, type, ev.object, versions));
}

/**
 * One event in the negotiated form, spelled in the group the client asked for: a JSON line (the
 * object or its Table), a protobuf frame or a CBOR item. cache: stored is a stored version whose
 * protobuf message may come from the cache of encoded versions (EncodedCache).
 */
function encode(r: ResourceRequest, rendering: Rendering, type: string, stored: KObject, cache?: CachedEncoding): string | Buffer {
  const obj = servedEventObject(r.info, stored);
  if (rendering.kind === 'protobuf') return encodeWatchFrame(type, r.type.schema, obj, cache);
  if (rendering.kind === 'cbor') return encodeCborWatchEvent(type, r.type.schema, obj);
  const object = rendering.kind === 'table' ? toTable(r.type, [obj], { resourceVersion: obj.metadata.resourceVersion }, rendering) : obj;
  return JSON.stringify({ type, object }) + '\n';
}

function bookmark(r: ResourceRequest, rendering: Rendering, rv: number, annotations?: Record<string, string>): string | Buffer {
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  if (annotations) metadata.annotations = annotations;
  const group = r.info.servedGroup ?? r.type.group;
  const apiVersion = group ? `${group}/${r.type.version}` : r.type.version;
  const object = { kind: r.type.kind, apiVersion, metadata };
  if (rendering.kind === 'protobuf') return encodeWatchFrame('BOOKMARK', r.type.schema, object);
  if (rendering.kind === 'cbor') return encodeCborWatchEvent('BOOKMARK', r.type.schema, object);
  return JSON.stringify({ type: 'BOOKMARK', object }) + '\n';
}

/**
 * Whether the watch starts with synthetic ADDED events: sendInitialEvents when given (upstream's
 * ListOptions validation: it needs resourceVersionMatch=NotOlderThan and bookmarks, and its
 * WatchList gate, StreamingList in the spec), else for a watch from no version or "0".
 */
function initialEventsAsked(r: ResourceRequest, q: ReturnType<typeof listQuery>, bookmarks: boolean): boolean {
  const sendInitialText = r.query.get('sendInitialEvents');
  const sendInitialAsked = queryBool(r.query, 'sendInitialEvents');
  const rvText = q.resourceVersion ?? '';
  if (sendInitialText !== null) {
    // Upstream's ListOptions validation with its WatchList gate off (the spec calls the gate StreamingList).
    if (!gateOn(r.gates, 'StreamingList')) throw new ApiError('BadRequest', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the StreamingList feature gate is enabled');
    if (q.resourceVersionMatch !== 'NotOlderThan') {
      throw new ApiError('BadRequest', 'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    }
  } else if (q.resourceVersionMatch) {
    throw new ApiError('BadRequest', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
  }
  if (sendInitialText !== null && sendInitialAsked && !bookmarks) {
    throw new ApiError('BadRequest', 'allowWatchBookmarks: Forbidden: sendInitialEvents requires allowWatchBookmarks=true');
  }
  return sendInitialText !== null ? sendInitialAsked : rvText === '' || rvText === '0';
}
