/**
 * The pod resources server on a real unix socket, called by a real gRPC client: the three
 * methods, NOT_FOUND, the rate limit (with a frozen bucket clock, so the count is exact), the
 * socket's mode, a stale socket replaced on start, and the socket removed on close.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import { PodResourcesServer, podResourcesSocketPath, RATE_LIMIT_MESSAGE } from '../../../../agent/podresources/pod-resources-server';
import { loadPodResourcesProto } from '../../../../agent/podresources/podresources-proto';
import { fakeNode, makeStaleSocket } from '../../../helpers/device-doubles';
import { MemLog } from '../node/fakes/mem-log';

type Call = (req: object) => Promise<any>;

function client(socket: string): { list: Call; get: Call; allocatable: Call; close: () => void } {
  const Lister = loadPodResourcesProto();
  const c = new Lister(`unix://${socket}`, grpc.credentials.createInsecure()) as unknown as Record<string, (...args: unknown[]) => void> & grpc.Client;
  const call = (m: string): Call => (req) =>
    new Promise((resolve, reject) => c[m].call(c, req, { deadline: Date.now() + 20_000 }, (err: grpc.ServiceError | null, res: unknown) => (err ? reject(err) : resolve(res))));
  return { list: call('List'), get: call('Get'), allocatable: call('GetAllocatableResources'), close: () => c.close() };
}

function setup(t: { teardown(fn: () => void): void }, opts: { now?: () => number } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-podres-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { pods, devices } = fakeNode(3, 2);
  const socketPath = path.join(dir, 'kubelet.sock');
  const log = new MemLog();
  const server = new PodResourcesServer({ socketPath, pods, devices, log, ...(opts.now ? { now: opts.now } : {}) });
  return { dir, socketPath, server, pods, devices, log };
}

test('socket path is upstream\'s: <root-dir>/pod-resources/kubelet.sock', (t) => {
  t.is(podResourcesSocketPath('/var/lib/svc-node'), '/var/lib/svc-node/pod-resources/kubelet.sock');
});

test('List, Get and GetAllocatableResources over the socket', async (t) => {
  const { socketPath, server } = setup(t);
  await server.start();
  const c = client(socketPath);
  try {
    const list = await c.list({});
    t.deepEqual(list.pod_resources.map((p: any) => `${p.namespace}/${p.name}`), ['default/pod-0', 'default/pod-1', 'default/pod-2']);
    const c1 = list.pod_resources[1].containers[0];
    t.is(c1.name, 'c');
    t.deepEqual(c1.devices, [{ resource_name: 'example.com/foo', device_ids: ['dev-2', 'dev-3'], topology: { nodes: [{ ID: '1' }] } }]);
    t.deepEqual(c1.cpu_ids, []);
    t.deepEqual(c1.memory, []);

    const got = await c.get({ pod_namespace: 'default', pod_name: 'pod-2' });
    t.is(got.pod_resources.name, 'pod-2');
    t.deepEqual(got.pod_resources.containers[0].devices[0].device_ids, ['dev-4', 'dev-5']);

    const alloc = await c.allocatable({});
    t.is(alloc.devices.length, 6);
    t.true(alloc.devices.every((d: any) => d.device_ids.length === 1 && d.resource_name === 'example.com/foo'));
    t.deepEqual(alloc.devices.map((d: any) => d.topology.nodes[0].ID), ['0', '0', '1', '1', '0', '0']);
  } finally {
    c.close();
    await server.close();
  }
});

test('Get of an unknown pod is NOT_FOUND with upstream\'s message', async (t) => {
  const { socketPath, server, log } = setup(t);
  await server.start();
  const c = client(socketPath);
  try {
    const err = await t.throwsAsync(c.get({ pod_namespace: 'default', pod_name: 'ghost' }));
    t.is((err as grpc.ServiceError).code, grpc.status.NOT_FOUND);
    t.is((err as grpc.ServiceError).details, 'pod ghost in namespace default not found');
    t.is(log.find('pod resources call failed').length, 0, 'an unknown pod is not a server failure');
  } finally {
    c.close();
    await server.close();
  }
});

test('rate limit: the 11th call inside a frozen instant is RESOURCE_EXHAUSTED "rejected by rate limit"; time refills the bucket', async (t) => {
  let now = 0;
  const { socketPath, server, devices } = setup(t, { now: () => now });
  await server.start();
  const c = client(socketPath);
  try {
    const results = await Promise.allSettled(Array.from({ length: 25 }, () => c.list({})));
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter((r) => r.status === 'rejected');
    t.is(ok, 10);
    t.is(refused.length, 15);
    for (const r of refused) {
      t.is((r.reason as grpc.ServiceError).code, grpc.status.RESOURCE_EXHAUSTED);
      t.is((r.reason as grpc.ServiceError).details, RATE_LIMIT_MESSAGE);
    }
    t.is(server.refusedCalls, 15);
    // A refused call does not reach the providers: 10 Lists x 3 pods x 1 container.
    t.is(devices.lookups, 30);
    // Every method is limited, not only List.
    await t.throwsAsync(c.allocatable({}), { message: /rejected by rate limit/ });
    now += 20; // two tokens at 100 QPS
    await c.get({ pod_namespace: 'default', pod_name: 'pod-0' });
    await c.allocatable({});
    await t.throwsAsync(c.list({}), { message: /rejected by rate limit/ });
  } finally {
    c.close();
    await server.close();
  }
});

test('the socket is 0600, replaces a stale socket on start and is removed on close', async (t) => {
  const { socketPath, server } = setup(t);
  await makeStaleSocket(socketPath);
  t.true(statSync(socketPath).isSocket());
  await server.start();
  t.is(statSync(socketPath).mode & 0o777, 0o600);
  const c = client(socketPath);
  try {
    t.is((await c.list({})).pod_resources.length, 3);
  } finally {
    c.close();
  }
  await server.close();
  t.false(existsSync(socketPath));
  // Starting again makes a fresh socket (a restart).
  const again = setup(t);
  await again.server.start();
  t.true(statSync(again.socketPath).isSocket());
  await again.server.close();
});

test('a non-socket file in the way is not deleted: start fails naming it', async (t) => {
  const { socketPath, server } = setup(t);
  writeFileSync(socketPath, 'operator data');
  await t.throwsAsync(server.start(), { message: /exists and is not a socket/ });
  t.true(statSync(socketPath).isFile());
});

test('run(signal) serves until the signal aborts, then removes the socket', async (t) => {
  const { socketPath, server } = setup(t);
  const ac = new AbortController();
  const running = server.run(ac.signal);
  const c = client(socketPath);
  try {
    // Calls made before the bind finishes wait for the connection (gRPC waits for ready only with the flag), so poll.
    let list: any;
    for (let i = 0; i < 200 && !list; i++) {
      list = await c.list({}).catch(() => undefined);
      if (!list) await new Promise((r) => setTimeout(r, 50));
    }
    t.is(list.pod_resources.length, 3);
  } finally {
    c.close();
  }
  ac.abort();
  await running;
  t.false(existsSync(socketPath));
});
