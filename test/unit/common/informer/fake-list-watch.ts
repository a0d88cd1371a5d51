/** A scripted ListerWatcher for the informer tests: lists answer from a queue, watches are streams the test drives. */
import type { ListerWatcher, ListResult, MetaObject, WatchEvent, WatchHint } from '../../../../common/informer/list-watch';

export interface Obj extends MetaObject {
  spec?: string;
}

export function obj(name: string, rv: string, spec = '', namespace?: string): Obj {
  return { metadata: { name, resourceVersion: rv, ...(namespace ? { namespace } : {}) }, spec };
}

/** One watch stream: the test pushes events, ends it, or fails it. */
export class Stream {
  private queue: WatchEvent<Obj>[] = [];
  private ended?: { err?: Error };
  private wake?: () => void;
  constructor(
    readonly from: string,
    readonly signal: AbortSignal,
    readonly hint: WatchHint,
  ) {
    signal.addEventListener('abort', () => this.wake?.(), { once: true });
  }

  push(ev: WatchEvent<Obj>): void {
    this.queue.push(ev);
    this.wake?.();
  }

  /** The source ends the stream normally (a server-side timeout). */
  end(): void {
    this.ended = {};
    this.wake?.();
  }

  /** The source fails the stream (e.g. 410). */
  fail(err: Error): void {
    this.ended = { err };
    this.wake?.();
  }

  async *events(): AsyncGenerator<WatchEvent<Obj>> {
    for (;;) {
      while (this.queue.length > 0) yield this.queue.shift()!;
      if (this.signal.aborted) return;
      if (this.ended) {
        if (this.ended.err) throw this.ended.err;
        return;
      }
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}

export class FakeListWatch implements ListerWatcher<Obj> {
  /** What the next lists answer, in order; the last one is repeated. An Error rejects. */
  readonly lists: Array<ListResult<Obj> | Error> = [];
  listCalls = 0;
  readonly watches: Stream[] = [];
  private last?: ListResult<Obj> | Error;

  list(): Promise<ListResult<Obj>> {
    this.listCalls++;
    const next = this.lists.length > 0 ? this.lists.shift()! : this.last;
    this.last = next;
    if (!next) return Promise.reject(new Error('no list scripted'));
    if (next instanceof Error) return Promise.reject(next);
    return Promise.resolve({ items: [...next.items], resourceVersion: next.resourceVersion });
  }

  watch(from: string, signal: AbortSignal, hint: WatchHint): AsyncIterable<WatchEvent<Obj>> {
    const s = new Stream(from, signal, hint);
    this.watches.push(s);
    return s.events();
  }

  /** The newest watch stream. */
  get current(): Stream {
    return this.watches[this.watches.length - 1];
  }
}
