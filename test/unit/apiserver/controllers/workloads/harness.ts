/**
 * Shared set-up of the StatefulSet and DaemonSet controller tests: the store fixture, a recording
 * event recorder, the controller's clock on the fixture's fake time, and waits on store state.
 */
import type { EventObjectRef, EventRecorder } from '../../../../../common/events/recorder';
import type { Clock } from '../../../../../common/informer/clock';
import type { KObject } from '../../../../../apiserver/api/types';
import { FakeTimers } from '../../scheduler/fake-timers';
import { adminCtx, type Fixture } from '../store-fixture';

export interface RecordedEvent {
  regarding: string;
  type: string;
  reason: string;
  message: string;
}

/** An EventRecorder that keeps what it is told. */
export class RecordingRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];
  event(regarding: EventObjectRef, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.events.push({ regarding: `${regarding.kind}/${regarding.name}`, type, reason, message });
  }
  messages(reason?: string): string[] {
    return this.events.filter((e) => !reason || e.reason === reason).map((e) => e.message);
  }
}

/** The controller's Clock on the fixture's fake time: timers fire only when the test advances them. */
export function fakeClock(f: Fixture): { clock: Clock; timers: FakeTimers } {
  const timers = new FakeTimers(f.clock);
  return { clock: { now: () => f.clock.ms, after: (ms, fn) => timers.after(ms, fn) }, timers };
}

const everything = { labelSelector: [], fieldSelector: [] };

export async function list(f: Fixture, group: string, resource: string, ns: string): Promise<KObject[]> {
  return (await f.store.list(f.type(group, 'v1', resource), ns, everything)).items;
}

export async function podNames(f: Fixture, ns: string): Promise<string[]> {
  return (await list(f, '', 'pods', ns)).map((p) => p.metadata.name!).sort();
}

/**
 * Resolves with check's first truthy answer, checking now and after every store event from now on
 * (a condition, not a sleep); rejects after a generous bound with what it waited for.
 */
export async function until<T>(f: Fixture, check: () => Promise<T | undefined | false | null>, what: string, boundMs = 20_000): Promise<T> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), boundMs);
  try {
    const from = f.cache.currentRevision();
    const first = await check();
    if (first) return first;
    for await (const _ev of f.cache.watch('/', from, ac.signal)) {
      const v = await check();
      if (v) return v;
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  throw new Error(`never ${what}`);
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** What the node agent would report: the pod Running, Ready since now (fake time), or with the phase given. */
export async function setPodStatus(f: Fixture, ns: string, name: string, o: { phase?: string; ready?: boolean } = {}): Promise<void> {
  const ready = o.ready ?? true;
  await f.store.update(
    f.type('', 'v1', 'pods'),
    ns,
    name,
    (cur) => ({
      ...cur!,
      status: { ...(cur!.status as object), phase: o.phase ?? 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: iso(f.clock.ms) }] },
    }),
    { ...adminCtx, subresource: 'status' },
  );
}
