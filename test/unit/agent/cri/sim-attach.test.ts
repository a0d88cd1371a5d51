/**
 * The simulator's attach to a container's main process (agent/cri/sim-streams.ts): a container
 * created with stdin whose main process is an interactive shell gets the attach's streams, and
 * exits as upstream's would: by its own `exit`, or once the first attach's stdin ends when the
 * container has stdinOnce (what `kubectl run -it --rm` waits for).
 */
import test from 'ava';
import { PassThrough } from 'node:stream';
import { Simulator } from '../../../../agent/cri/simulator';
import type { ExecStreams } from '../../../../common/stream/exec-streams';
import type { ExitResult } from '../../../../common/stream/remotecommand';
import { containerConfig, sandboxConfig } from './configs';

async function shellContainer(sim: Simulator, name: string, stdinOnce: boolean, args = ['sh']): Promise<string> {
  const sb = await sim.runPodSandbox(sandboxConfig(name));
  const config = { ...containerConfig('main', 'svc.local/busybox:latest', { args }), stdin: true, tty: true, ...(stdinOnce ? { stdinOnce: true } : {}) };
  const id = await sim.createContainer(sb, config, sandboxConfig(name));
  await sim.startContainer(id);
  return id;
}

/** Runs an attach with `input` written to its stdin (ended unless `keepOpen`); `abort` ends the client instead. */
async function attach(sim: Simulator, id: string, input: string, how: 'end' | 'abort' | 'open' = 'end'): Promise<{ result: ExitResult; out: string }> {
  const url = await sim.attach({ containerId: id, stdin: true, stdout: true, stderr: false, tty: true });
  const target = sim.localStream(url);
  if (target?.kind !== 'exec') throw new Error('no exec target');
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  const client = new AbortController();
  const streams: ExecStreams = { stdin, stdout, tty: true, protocol: 'v5.channel.k8s.io', onResize: () => undefined, finish: () => Promise.resolve(), signal: client.signal };
  const running = target.run(streams);
  stdin.write(input);
  if (how === 'end') stdin.end();
  if (how === 'abort') {
    await new Promise((r) => setImmediate(r));
    client.abort();
    stdin.destroy();
  }
  return { result: await running, out };
}

test('stdinOnce: the container exits (0) when the first attach closes stdin, its shell having run the lines typed', async (t) => {
  const sim = new Simulator();
  const id = await shellContainer(sim, 'run-it', true);
  const { result, out } = await attach(sim, id, 'echo typed\r');
  t.deepEqual(result, { exitCode: 0 });
  t.is(out, 'typed\n');
  const st = (await sim.containerStatus(id)).status;
  t.is(st.state, 'CONTAINER_EXITED');
  t.is(st.exitCode, 0);
  t.is(st.reason, 'Completed');
  t.is(sim.openStreams(), 0);
});

test('stdinOnce: a client that goes away ends the container too (its stdin is closed)', async (t) => {
  const sim = new Simulator();
  const id = await shellContainer(sim, 'vanish', true);
  await attach(sim, id, 'false\n', 'abort');
  t.is((await sim.containerStatus(id)).status.state, 'CONTAINER_EXITED');
});

test('an exit typed into the attached shell is the container\'s exit code, stdinOnce or not; the attach itself ends 0', async (t) => {
  const sim = new Simulator();
  const id = await shellContainer(sim, 'exit3', false);
  const { result } = await attach(sim, id, 'exit 3\n', 'open');
  t.deepEqual(result, { exitCode: 0 });
  const st = (await sim.containerStatus(id)).status;
  t.is(st.state, 'CONTAINER_EXITED');
  t.is(st.exitCode, 3);
  t.is(st.reason, 'Error');
});

test('without stdinOnce the container keeps running when the attach closes stdin (its stdin stays open upstream)', async (t) => {
  const sim = new Simulator();
  const id = await shellContainer(sim, 'keep', false);
  const { out } = await attach(sim, id, 'echo once\n');
  t.is(out, 'once\n');
  t.is((await sim.containerStatus(id)).status.state, 'CONTAINER_RUNNING');
});

test('a main process that does not read stdin (sleep) keeps the echoing attach and runs on', async (t) => {
  const sim = new Simulator();
  const id = await shellContainer(sim, 'sleeper', true, ['sleep', '3600']);
  const { out } = await attach(sim, id, 'echo me\n');
  t.is(out, 'echo me\n');
  t.is((await sim.containerStatus(id)).status.state, 'CONTAINER_RUNNING');
});
