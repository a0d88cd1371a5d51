/**
 * The PLEG on the CRI simulator with fake time: with the event stream (the simulator's default)
 * a container change wakes its pod at once and relisting slows to the safety-net period; without
 * it (Unimplemented, as containerd 1.6) relisting every period finds the change; a stream that
 * breaks puts relisting back to every period until a reopened stream has been healthy again.
 */
import test from 'ava';
import type { CallOptions } from '../../../../agent/cri/runtime-service';
import { Simulator } from '../../../../agent/cri/simulator';
import type { ContainerFilter, Container } from '../../../../agent/cri/types';
import { Pleg } from '../../../../agent/pod/pleg';
import { MANAGED_BY, MANAGER, POD_UID } from '../../../../agent/pod/runtime-labels';
import { FakeClock, flush } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';

class CountingSim extends Simulator {
  lists = 0;
  override async listContainers(filter?: ContainerFilter, opts?: CallOptions): Promise<Container[]> {
    this.lists++;
    return super.listContainers(filter, opts);
  }
}

const PERIOD = 1000;
const EVENTED_PERIOD = 60_000;

async function setup(events: boolean) {
  const clock = new FakeClock();
  const sim = new CountingSim({ clock, events });
  await sim.connect();
  const woken: string[] = [];
  const log = new MemLog();
  const pleg = new Pleg({ runtime: sim, clock, log, periodMs: PERIOD, eventedPeriodMs: EVENTED_PERIOD, timeoutMs: 5000, onChange: (uid) => woken.push(uid) });
  const ac = new AbortController();
  const done = pleg.run(ac.signal);
  await flush();
  const labels = { [POD_UID]: 'uid-1', [MANAGED_BY]: MANAGER };
  const sb = { metadata: { name: 'p', namespace: 'ns', uid: 'uid-1', attempt: 0 }, labels };
  const stop = async () => {
    ac.abort();
    await done;
    sim.close();
  };
  return { clock, sim, pleg, woken, log, sb, labels, stop };
}

async function runContainer(sim: Simulator, sb: Parameters<Simulator['runPodSandbox']>[0], labels: Record<string, string>): Promise<string> {
  const sid = await sim.runPodSandbox(sb);
  const id = await sim.createContainer(sid, { metadata: { name: 'c', attempt: 0 }, image: { image: 'svc.local/busybox:latest' }, labels }, sb);
  await sim.startContainer(id);
  return id;
}

test('with the event stream, a crash wakes the pod at once and relisting drops to the safety-net period', async (t) => {
  const { clock, sim, pleg, woken, sb, labels, stop, log } = await setup(true);
  try {
    t.is(pleg.mode, 'relist');
    await clock.advance(PERIOD);
    t.is(pleg.mode, 'evented');
    t.is(pleg.relistPeriodMs, EVENTED_PERIOD);
    const id = await runContainer(sim, sb, labels);
    await flush();
    t.true(woken.includes('uid-1'), 'woken by the events, no time passed');
    woken.length = 0;
    sim.crash(id, 3);
    await flush();
    t.deepEqual([...new Set(woken)], ['uid-1']);
    // Relisting: the first one after switching, then one per evented period.
    const before = sim.lists;
    await clock.advance(EVENTED_PERIOD - PERIOD);
    await clock.advance(10 * PERIOD);
    t.true(sim.lists - before <= 2, `${sim.lists - before} relists in ${EVENTED_PERIOD / 1000 + 10} s`);
    t.true(sim.lists - before >= 1, 'the safety net still relists');
    t.is(log.find('following runtime container events').length, 1);
  } finally {
    await stop();
  }
});

test('without the event stream (Unimplemented), relisting every period finds the crash', async (t) => {
  const { clock, sim, pleg, woken, sb, labels, stop, log } = await setup(false);
  try {
    await clock.advance(PERIOD);
    t.is(pleg.mode, 'relist');
    t.is(log.find('no container event stream').length, 1);
    const id = await runContainer(sim, sb, labels);
    await flush();
    t.deepEqual(woken, [], 'nothing but a relist can see it');
    await clock.advance(PERIOD);
    t.deepEqual(woken, ['uid-1']);
    woken.length = 0;
    sim.crash(id, 3);
    await clock.advance(PERIOD);
    t.deepEqual(woken, ['uid-1']);
    const before = sim.lists;
    await clock.advance(10 * PERIOD);
    t.true(sim.lists - before >= 9, `${sim.lists - before} relists in 10 periods`);
  } finally {
    await stop();
  }
});

test('a broken stream brings relisting back at once; a reopened one is trusted again after a healthy period', async (t) => {
  const { clock, sim, pleg, woken, sb, labels, stop } = await setup(true);
  try {
    await clock.advance(PERIOD);
    t.is(pleg.mode, 'evented');
    const id = await runContainer(sim, sb, labels);
    await flush();
    woken.length = 0;
    sim.setAvailable(false);
    await flush();
    t.is(pleg.mode, 'relist');
    // While the runtime is down, the container exits; nobody can tell yet.
    sim.setAvailable(true);
    sim.crash(id, 1);
    sim.setAvailable(false);
    await clock.advance(PERIOD);
    t.deepEqual(woken, []);
    sim.setAvailable(true);
    // The stream reopens after its back-off, and the next relist (every period again) sees the exit the stream missed.
    await clock.advance(2 * PERIOD);
    t.deepEqual([...new Set(woken)], ['uid-1']);
    await clock.advance(3 * PERIOD);
    t.is(pleg.mode, 'evented');
  } finally {
    await stop();
  }
});
