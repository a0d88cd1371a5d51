/** runningContainers: a stream's or checkpoint's container is the newest running instance, found with one filtered ListContainers. */
import test from 'ava';
import type { Pod } from '../../../../agent/api/core-v1';
import { ContainerNotFoundError, runningContainers } from '../../../../agent/checkpoint/container-locator';
import type { Container, ContainerFilter } from '../../../../agent/cri/container-types';

const web = {
  metadata: { namespace: 'default', name: 'web', uid: 'uid-web' },
  spec: { containers: [{ name: 'app' }], initContainers: [{ name: 'setup' }], ephemeralContainers: [{ name: 'debugger' }] },
} as unknown as Pod;

function container(id: string, name: string, attempt: number, createdAt: number): Container {
  return { id, podSandboxId: 'sb', metadata: { name, attempt }, image: { image: 'i' }, imageRef: 'i', imageId: 'i', state: 'CONTAINER_RUNNING', createdAt, labels: {}, annotations: {} };
}

function setup(running: Container[]) {
  const asked: { filter?: ContainerFilter; signal?: AbortSignal }[] = [];
  const locator = runningContainers({
    runtime: {
      listContainers(filter, opts) {
        asked.push({ filter, signal: opts?.signal });
        return Promise.resolve(running.filter((c) => c.metadata.name === filter?.labelSelector?.['io.kubernetes.container.name']));
      },
    },
    pods: { podByName: (ns, name) => (ns === 'default' && name === 'web' ? web : undefined) },
  });
  return { locator, asked };
}

test('the newest running attempt, asked for with the pod UID, the container name and the running state', async (t) => {
  const { locator, asked } = setup([container('old', 'app', 0, 1), container('new', 'app', 1, 2), container('tie-older', 'app', 1, 1)]);
  const signal = new AbortController().signal;
  t.is(await locator.containerId('default', 'web', 'app', signal), 'new');
  t.deepEqual(asked, [{ filter: { state: 'CONTAINER_RUNNING', labelSelector: { 'io.kubernetes.pod.uid': 'uid-web', 'io.kubernetes.container.name': 'app' } }, signal }]);
});

test('init and ephemeral containers are found by name as well', async (t) => {
  const { locator } = setup([container('s1', 'setup', 0, 1), container('d1', 'debugger', 0, 1)]);
  t.is(await locator.containerId('default', 'web', 'setup'), 's1');
  t.is(await locator.containerId('default', 'web', 'debugger'), 'd1');
});

test('an unknown pod, a name outside the spec and a container not running are not found (404), the runtime asked only for the last', async (t) => {
  const { locator, asked } = setup([]);
  await t.throwsAsync(locator.containerId('default', 'gone', 'app'), { instanceOf: ContainerNotFoundError, message: 'pod default/gone is not running on this node' });
  await t.throwsAsync(locator.containerId('default', 'web', 'nope'), { instanceOf: ContainerNotFoundError, message: 'container nope is not valid for pod web' });
  t.is(asked.length, 0);
  const e = await t.throwsAsync(locator.containerId('default', 'web', 'app'), { instanceOf: ContainerNotFoundError, message: 'container "app" in pod "web" is not running' });
  t.is(e?.httpStatus, 404);
  t.is(asked.length, 1);
});
