/** Finding a container's log file: the pod, the container name, the current or previous instance, upstream's 400/404 answers. */
import test from 'ava';
import type { RuntimeService } from '../../../../agent/cri';
import { LogLocateError } from '../../../../agent/logs/container-log-handler';
import { PodLogLookup } from '../../../../agent/pod/pod-log-lookup';
import type { Pod } from '../../../../agent/api/core-v1';
import type { RuntimeContainer, RuntimePod } from '../../../../agent/pod/runtime-pod';

const web: Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'uid-web' },
  spec: { containers: [{ name: 'app', image: 'busybox' }], initContainers: [{ name: 'init', image: 'busybox' }], ephemeralContainers: [{ name: 'debugger', image: 'busybox' }] },
};

function ctr(id: string, name: string, attempt: number, o: Partial<RuntimeContainer> = {}): RuntimeContainer {
  return {
    id,
    sandboxId: 's1',
    name,
    kind: 'container',
    attempt,
    state: 'CONTAINER_EXITED',
    createdAt: attempt,
    startedAt: attempt,
    finishedAt: attempt,
    exitCode: 0,
    reason: '',
    message: '',
    image: 'busybox',
    imageRef: 'sha256:x',
    hash: '',
    logPath: `/logs/${name}/${attempt}.log`,
    ...o,
  };
}

function lookup(rp: RuntimePod | undefined, statusOf: (id: string) => string = () => 'CONTAINER_RUNNING') {
  const fetched: string[] = [];
  const runtime = {
    containerStatus: (id: string) => {
      const state = statusOf(id);
      if (state === 'error') return Promise.reject(new Error('runtime down'));
      return Promise.resolve({ status: { state } });
    },
  } as unknown as RuntimeService;
  const l = new PodLogLookup({
    runtime,
    runtimeRequestTimeoutMs: 1000,
    podByName: (ns, name) => (ns === 'default' && name === 'web' ? web : undefined),
    runtimePods: () =>
      rp && {
        fetch: (uid: string) => {
          fetched.push(uid);
          return Promise.resolve(rp);
        },
      },
  });
  return { l, fetched };
}

async function code(p: Promise<unknown>): Promise<[number, string]> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof LogLocateError)) throw new Error(`expected LogLocateError, got ${String(e)}`);
  return [e.httpStatus, e.message];
}

test('the newest instance, or the one before with previous; init containers by their kind', async (t) => {
  const rp: RuntimePod = {
    sandboxes: [],
    containers: [ctr('c2', 'app', 1, { state: 'CONTAINER_RUNNING' }), ctr('c1', 'app', 0), ctr('i1', 'init', 0, { kind: 'init' })],
  };
  const { l, fetched } = lookup(rp);
  t.deepEqual(await l.containerLog('default', 'web', 'app', false), { path: '/logs/app/1.log', containerId: 'c2', running: true });
  t.deepEqual(await l.containerLog('default', 'web', 'app', true), { path: '/logs/app/0.log', containerId: 'c1', running: false });
  t.deepEqual(await l.containerLog('default', 'web', 'init', false), { path: '/logs/init/0.log', containerId: 'i1', running: false });
  t.deepEqual(fetched, ['uid-web', 'uid-web', 'uid-web']);
});

test("unknown pods and containers are 404, a missing instance 400 with upstream's message", async (t) => {
  const { l } = lookup({ sandboxes: [], containers: [ctr('c1', 'app', 0, { logPath: '' })] });
  t.deepEqual(await code(l.containerLog('default', 'nope', 'app', false)), [404, 'pod default/nope is not running on this node']);
  t.deepEqual(await code(l.containerLog('default', 'web', 'sidecar', false)), [404, 'container sidecar is not valid for pod web']);
  t.deepEqual(await code(l.containerLog('default', 'web', 'app', true)), [400, 'previous terminated container "app" in pod "web" not found']);
  t.deepEqual(await code(l.containerLog('default', 'web', 'init', false)), [400, 'container "init" in pod "web" is waiting to start: ContainerCreating']);
  t.deepEqual(await code(l.containerLog('default', 'web', 'app', false)), [404, 'container "app" in pod "web" has no log file']);
});

test('before the runtime is connected the pod is 404; containerRunning is false on any runtime error', async (t) => {
  const { l } = lookup(undefined, (id) => (id === 'up' ? 'CONTAINER_RUNNING' : id === 'down' ? 'CONTAINER_EXITED' : 'error'));
  t.deepEqual(await code(l.containerLog('default', 'web', 'app', false)), [404, 'the container runtime is not connected yet']);
  t.true(await l.containerRunning('up'));
  t.false(await l.containerRunning('down'));
  t.false(await l.containerRunning('gone'));
});

test('ephemeral containers have logs too (kubectl logs pod -c debugger after kubectl debug)', async (t) => {
  const rp: RuntimePod = {
    sandboxes: [],
    containers: [ctr('c1', 'app', 0, { state: 'CONTAINER_RUNNING' }), ctr('e1', 'debugger', 0, { kind: 'ephemeral', state: 'CONTAINER_RUNNING' })],
  };
  const { l } = lookup(rp);
  t.deepEqual(await l.containerLog('default', 'web', 'debugger', false), { path: '/logs/debugger/0.log', containerId: 'e1', running: true });
  t.deepEqual(await code(l.containerLog('default', 'web', 'debugger', true)), [400, 'previous terminated container "debugger" in pod "web" not found']);
});
