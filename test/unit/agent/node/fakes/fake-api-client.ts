/**
 * An in-memory ApiClient for unit tests: a tiny object store with resourceVersions, uids,
 * generateName, conflicts, merge and (a small subset of) strategic merge patches, status
 * sub-resources and watches; plus fault injection (server down, one-off failures, hanging calls)
 * and a log of every call.
 */
import type { KList, KObject } from '../../../../../apiserver/api/types';
import { isObject } from '../../../../../apiserver/api/types';
import type {
  ApiClient,
  CredentialSwappable,
  GetOptions,
  ListOptions,
  PatchType,
  RequestOptions,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from '../../../../../agent/client/api-client';
import { ClientError, GoneError } from '../../../../../agent/client/client-error';
import type { ResourceRef } from '../../../../../agent/client/resources';

export interface Call {
  verb: 'get' | 'create' | 'update' | 'patch' | 'delete' | 'list' | 'watch';
  resource: string;
  name?: string;
  namespace?: string;
  subresource?: string;
  patchType?: PatchType;
  body?: unknown;
  opts?: unknown;
}

interface Fault {
  match: (c: Call) => boolean;
  error: () => Error;
  times: number;
}

interface Watcher {
  resource: string;
  namespace?: string;
  name?: string;
  push: (ev: WatchEvent | Error | null) => void;
}

interface LoggedEvent {
  rv: number;
  resource: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KObject;
}

const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

function abortError(): Error {
  const e = new Error('aborted');
  e.name = 'AbortError';
  return e;
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Strategic merge for the shapes the agent sends: lists of objects with a `type` key merge by it; `{$patch: replace}` replaces a list. */
export function strategicPatch(target: unknown, patch: unknown): unknown {
  if (Array.isArray(patch)) {
    const replace = patch.some((e) => isObject(e) && e['$patch'] === 'replace');
    const items = patch.filter((e) => !(isObject(e) && e['$patch'] === 'replace'));
    if (replace || !items.every((e) => isObject(e) && typeof e['type'] === 'string')) return clone(items);
    const out = Array.isArray(target) ? clone(target) : [];
    for (const p of items as Record<string, unknown>[]) {
      const i = out.findIndex((e: unknown) => isObject(e) && e['type'] === p['type']);
      if (i >= 0) out[i] = strategicPatch(out[i], p);
      else out.push(clone(p));
    }
    return out;
  }
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = strategicPatch(out[k], v);
  }
  return out;
}

export class FakeApiClient implements ApiClient, CredentialSwappable {
  private readonly objects = new Map<string, KObject>();
  private readonly events: LoggedEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private faults: Fault[] = [];
  private rv = 100;
  private uid = 0;
  private nameSeq = 0;
  /** Oldest version a watch may start from (older: 410). */
  compactedRv = 0;
  readonly calls: Call[] = [];
  redials = 0;
  readonly credentials: { certPem: string; keyPem: string }[] = [];
  /** Every call fails with a connection error. */
  down = false;
  /** Every call waits until its signal aborts (a half-dead connection). */
  hang = false;
  /** Runs after each successful write, e.g. to play an approver. */
  onWrite?: (c: Call, result: KObject) => void;

  private key(r: ResourceRef, namespace: string | undefined, name: string): string {
    return `${r.group}/${r.resource}/${r.namespaced ? (namespace ?? '') : ''}/${name}`;
  }

  /** Calls of one verb (and resource), for assertions. */
  callsOf(verb: Call['verb'], resource?: string): Call[] {
    return this.calls.filter((c) => c.verb === verb && (resource === undefined || c.resource === resource));
  }

  /** Fails the next `times` calls matching `match` with the error. */
  failNext(match: (c: Call) => boolean, error: () => Error, times = 1): void {
    this.faults.push({ match, error, times });
  }

  /** The stored object (a copy), or undefined. */
  peek<T extends KObject = KObject>(r: ResourceRef, name: string, namespace?: string): T | undefined {
    return clone(this.objects.get(this.key(r, namespace, name)) as T | undefined);
  }

  /** Puts an object directly (as another client would), emitting a watch event. */
  seed(r: ResourceRef, obj: KObject): KObject {
    const k = this.key(r, obj.metadata.namespace, obj.metadata.name!);
    const existed = this.objects.has(k);
    const stored = clone(obj);
    stored.metadata.uid ??= `uid-${++this.uid}`;
    stored.metadata.resourceVersion = String(++this.rv);
    this.objects.set(k, stored);
    this.emit(r, existed ? 'MODIFIED' : 'ADDED', stored);
    return clone(stored);
  }

  /** Changes a stored object in place (as a controller would), emitting MODIFIED. */
  mutate(r: ResourceRef, name: string, namespace: string | undefined, fn: (o: KObject) => void): KObject {
    const k = this.key(r, namespace, name);
    const o = this.objects.get(k);
    if (!o) throw new Error(`no ${k}`);
    fn(o);
    o.metadata.resourceVersion = String(++this.rv);
    this.emit(r, 'MODIFIED', o);
    return clone(o);
  }

  /** Deletes directly, emitting DELETED. */
  remove(r: ResourceRef, name: string, namespace?: string): void {
    const k = this.key(r, namespace, name);
    const o = this.objects.get(k);
    if (!o) return;
    this.objects.delete(k);
    o.metadata.resourceVersion = String(++this.rv);
    this.emit(r, 'DELETED', o);
  }

  /** Ends every open watch stream normally (as a server-side timeout does). */
  endWatches(): void {
    for (const w of this.watchers) w.push(null);
  }

  /** Fails every open watch stream with the error. */
  breakWatches(err: Error): void {
    for (const w of this.watchers) w.push(err);
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  get currentRv(): string {
    return String(this.rv);
  }

  private emit(r: ResourceRef, type: LoggedEvent['type'], obj: KObject): void {
    const ev = { rv: this.rv, resource: r.resource, type, object: clone(obj) };
    this.events.push(ev);
    for (const w of this.watchers) if (this.matches(w, ev)) w.push({ type, object: clone(obj) });
  }

  private matches(w: Watcher, ev: LoggedEvent): boolean {
    if (w.resource !== ev.resource) return false;
    if (w.namespace && ev.object.metadata.namespace !== w.namespace) return false;
    if (w.name && ev.object.metadata.name !== w.name) return false;
    return true;
  }

  private async enter(c: Call, signal?: AbortSignal): Promise<void> {
    this.calls.push(c);
    await Promise.resolve();
    if (signal?.aborted) throw abortError();
    if (this.hang) {
      await new Promise<void>((_, reject) => {
        if (!signal) return; // hangs forever
        signal.addEventListener('abort', () => reject(abortError()), { once: true });
      });
    }
    if (this.down) throw new ClientError(0, 'ConnectionFailed', `${c.verb} ${c.resource}: connect ECONNREFUSED 127.0.0.1:6443`);
    const f = this.faults.find((x) => x.times > 0 && x.match(c));
    if (f) {
      f.times--;
      this.faults = this.faults.filter((x) => x.times > 0);
      throw f.error();
    }
  }

  private notFound(r: ResourceRef, name: string): ClientError {
    return new ClientError(404, 'NotFound', `${r.resource} "${name}" not found`);
  }

  async get<T extends KObject = KObject>(r: ResourceRef, name: string, opts: GetOptions = {}): Promise<T> {
    await this.enter({ verb: 'get', resource: r.resource, name, namespace: opts.namespace, opts }, opts.signal);
    const o = this.objects.get(this.key(r, opts.namespace, name));
    if (!o) throw this.notFound(r, name);
    return clone(o) as T;
  }

  async create<T extends KObject = KObject>(r: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    const namespace = opts.namespace ?? obj.metadata.namespace;
    const c: Call = { verb: 'create', resource: r.resource, name: obj.metadata.name, namespace, body: clone(obj) };
    await this.enter(c, opts.signal);
    const stored = clone(obj) as KObject;
    if (!stored.metadata.name && stored.metadata.generateName) stored.metadata.name = `${stored.metadata.generateName}${String(++this.nameSeq).padStart(5, 'x')}`;
    const name = stored.metadata.name;
    if (!name) throw new ClientError(422, 'Invalid', 'name or generateName is required');
    if (r.namespaced) stored.metadata.namespace = namespace;
    const k = this.key(r, namespace, name);
    if (this.objects.has(k)) throw new ClientError(409, 'AlreadyExists', `${r.resource} "${name}" already exists`);
    stored.metadata.uid = `uid-${++this.uid}`;
    stored.metadata.resourceVersion = String(++this.rv);
    stored.metadata.creationTimestamp = '2025-01-01T00:00:00Z';
    this.objects.set(k, stored);
    this.emit(r, 'ADDED', stored);
    this.onWrite?.(c, clone(stored));
    return clone(stored) as T;
  }

  async update<T extends KObject = KObject>(r: ResourceRef, obj: T, opts: WriteOptions = {}): Promise<T> {
    const namespace = opts.namespace ?? obj.metadata.namespace;
    const name = obj.metadata.name ?? '';
    const c: Call = { verb: 'update', resource: r.resource, name, namespace, subresource: opts.subresource, body: clone(obj) };
    await this.enter(c, opts.signal);
    const k = this.key(r, namespace, name);
    const cur = this.objects.get(k);
    if (!cur) throw this.notFound(r, name);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw new ClientError(409, 'Conflict', `Operation cannot be fulfilled on ${r.resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    const stored = clone(obj) as KObject;
    stored.metadata = { ...stored.metadata, uid: cur.metadata.uid, creationTimestamp: cur.metadata.creationTimestamp, resourceVersion: String(++this.rv) };
    if (r.namespaced) stored.metadata.namespace = namespace;
    this.objects.set(k, stored);
    this.emit(r, 'MODIFIED', stored);
    this.onWrite?.(c, clone(stored));
    return clone(stored) as T;
  }

  async patch<T extends KObject = KObject>(r: ResourceRef, name: string, type: PatchType, patch: unknown, opts: WriteOptions = {}): Promise<T> {
    const c: Call = { verb: 'patch', resource: r.resource, name, namespace: opts.namespace, subresource: opts.subresource, patchType: type, body: clone(patch) };
    await this.enter(c, opts.signal);
    const k = this.key(r, opts.namespace, name);
    const cur = this.objects.get(k);
    if (!cur) throw this.notFound(r, name);
    if (type === 'json') throw new ClientError(415, 'UnsupportedMediaType', 'the fake does not do JSON patches');
    const merged = (type === 'merge' ? mergePatch(cur, patch) : strategicPatch(cur, patch)) as KObject;
    let next: KObject;
    if (opts.subresource === 'status') next = { ...clone(cur), status: merged['status'] };
    else next = { ...merged, status: clone(cur['status']) };
    next.metadata = { ...next.metadata, uid: cur.metadata.uid, resourceVersion: String(++this.rv) };
    this.objects.set(k, next);
    this.emit(r, 'MODIFIED', next);
    this.onWrite?.(c, clone(next));
    return clone(next) as T;
  }

  async delete(r: ResourceRef, name: string, opts: RequestOptions = {}): Promise<void> {
    await this.enter({ verb: 'delete', resource: r.resource, name, namespace: opts.namespace }, opts.signal);
    const k = this.key(r, opts.namespace, name);
    if (!this.objects.has(k)) throw this.notFound(r, name);
    this.remove(r, name, opts.namespace);
  }

  async list<T extends KObject = KObject>(r: ResourceRef, opts: ListOptions = {}): Promise<KList<T>> {
    await this.enter({ verb: 'list', resource: r.resource, namespace: opts.namespace, opts }, opts.signal);
    const items = [...this.objects.entries()]
      .filter(([k, o]) => k.startsWith(`${r.group}/${r.resource}/`) && (!opts.namespace || o.metadata.namespace === opts.namespace))
      .map(([, o]) => clone(o) as T);
    return { apiVersion: 'v1', kind: `${r.kind}List`, metadata: { resourceVersion: String(this.rv) }, items };
  }

  watch<T extends KObject = KObject>(r: ResourceRef, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the returned object's generator method has its own this and needs the fake's live state
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        await self.enter({ verb: 'watch', resource: r.resource, namespace: opts.namespace, opts: { ...opts, signal: undefined } }, opts.signal);
        const name = /^metadata\.name=(.+)$/.exec(opts.fieldSelector ?? '')?.[1];
        const queue: (WatchEvent | Error | null)[] = [];
        let wake: (() => void) | undefined;
        const w: Watcher = {
          resource: r.resource,
          namespace: opts.namespace,
          name,
          push: (ev) => {
            queue.push(ev);
            wake?.();
          },
        };
        const from = opts.resourceVersion ? Number(opts.resourceVersion) : undefined;
        if (from !== undefined && from > 0 && from < self.compactedRv) throw new GoneError(410, 'Expired', `too old resource version: ${from} (${self.compactedRv})`);
        if (from === undefined || from === 0) {
          for (const [k, o] of self.objects) {
            if (!k.startsWith(`${r.group}/${r.resource}/`)) continue;
            if (self.matches(w, { rv: 0, resource: r.resource, type: 'ADDED', object: o })) queue.push({ type: 'ADDED', object: clone(o) });
          }
        } else {
          for (const ev of self.events) if (ev.rv > from && self.matches(w, ev)) queue.push({ type: ev.type, object: clone(ev.object) });
        }
        self.watchers.add(w);
        const onAbort = () => w.push(null);
        opts.signal?.addEventListener('abort', onAbort, { once: true });
        try {
          for (;;) {
            while (queue.length === 0) await new Promise<void>((res) => (wake = res));
            const ev = queue.shift()!;
            if (ev === null) return;
            if (ev instanceof Error) throw ev;
            yield ev as WatchEvent<T>;
          }
        } finally {
          self.watchers.delete(w);
          opts.signal?.removeEventListener('abort', onAbort);
        }
      },
    };
  }

  redial(): Promise<void> {
    this.redials++;
    return Promise.resolve();
  }

  useClientCertificate(certPem: string, keyPem: string): void {
    this.credentials.push({ certPem, keyPem });
  }
}
