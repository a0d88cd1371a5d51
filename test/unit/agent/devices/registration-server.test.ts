/**
 * The Registration service and the gRPC plugin client over real unix sockets, against the sample
 * plugin (in-process): accepted and refused registrations, the device stream, health flips, a
 * plugin going away, a plugin hanging in Allocate.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import { DeviceAdmissionError, DeviceManager } from '../../../../agent/devices/device-manager';
import { realClock } from '../../../../agent/platform/clock';
import { RegistrationServer } from '../../../../agent/devices/registration-server';
import type { Pod } from '../../../../agent/api/core-v1';
import { SamplePlugin, type SamplePluginConfig } from '../../../fixtures/device-plugin/sample-plugin';
import { MemLog } from '../node/fakes/mem-log';

const RES = 'example.com/foo';

async function until(what: string, cond: () => boolean, boundMs = 20_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function setup(t: { teardown(fn: () => void | Promise<void>): void }, managerOpts: { callTimeoutMs?: number } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-devreg-'));
  const log = new MemLog();
  const dm = new DeviceManager({ dir, clock: realClock, log, gracePeriodMs: 60_000, admissionWaitMs: 1000, callTimeoutMs: managerOpts.callTimeoutMs ?? 5000 });
  await dm.start();
  const server = new RegistrationServer({ dir, registrar: dm, log });
  await server.start();
  const plugins: SamplePlugin[] = [];
  const plugin = (cfg: Partial<SamplePluginConfig> = {}) => {
    const p = new SamplePlugin({ resourceName: RES, devices: 3, pluginDir: dir, watchMs: 100, ...cfg }, () => undefined);
    plugins.push(p);
    return p;
  };
  t.teardown(async () => {
    for (const p of plugins) await p.stop();
    await dm.stop();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, log, dm, server, plugin };
}

function grpcCode(e: unknown): number | undefined {
  return (e as grpc.ServiceError).code;
}

test('a plugin registers on kubelet.sock; its devices and health flips reach the node resources', async (t) => {
  const { dm, plugin } = await setup(t);
  const p = plugin();
  await p.start();
  await until('devices', () => dm.extendedResources().allocatable[RES] === '3');
  p.flipHealth();
  await until('unhealthy', () => dm.extendedResources().allocatable[RES] === '0');
  t.is(dm.extendedResources().capacity[RES], '3');
  p.flipHealth();
  await until('healthy again', () => dm.extendedResources().allocatable[RES] === '3');
  t.is(p.calls['GetDevicePluginOptions'], 1);
  t.is(p.calls['ListAndWatch'], 1);
});

test('Register refuses a wrong version, an invalid resource name, a bad and an unreachable endpoint with gRPC errors', async (t) => {
  const { dir, plugin } = await setup(t);
  const wrong = plugin({ version: 'v1alpha', socketName: 'a.sock' });
  const e1 = await t.throwsAsync(wrong.registerOnce());
  t.is(grpcCode(e1), grpc.status.INVALID_ARGUMENT);
  t.regex(e1.message, /unsupported device plugin API version "v1alpha"/);
  const badName = plugin({ resourceName: 'foo', socketName: 'b.sock' });
  const e2 = await t.throwsAsync(badName.registerOnce());
  t.is(grpcCode(e2), grpc.status.INVALID_ARGUMENT);
  t.regex(e2.message, /must be domain-prefixed/);
  const escape = plugin({ socketName: '../evil.sock' });
  const e3 = await t.throwsAsync(escape.registerOnce());
  t.is(grpcCode(e3), grpc.status.INVALID_ARGUMENT);
  t.regex(e3.message, new RegExp(`must be the name of a socket file in ${dir}`));
  // Never served: the endpoint cannot be dialled.
  const absent = plugin({ socketName: 'absent.sock' });
  const e4 = await t.throwsAsync(absent.registerOnce());
  t.is(grpcCode(e4), grpc.status.UNAVAILABLE);
  t.regex(e4.message, /cannot reach device plugin endpoint .*absent\.sock/);
});

test('killing the plugin turns its devices unhealthy; re-registering brings them back', async (t) => {
  const { dm, plugin } = await setup(t);
  const p = plugin();
  await p.start();
  await until('devices', () => dm.extendedResources().allocatable[RES] === '3');
  await p.stop();
  await until('unhealthy', () => dm.extendedResources().allocatable[RES] === '0');
  t.is(dm.extendedResources().capacity[RES], '3');
  const again = plugin({ devices: 2 });
  await again.start();
  await until('back', () => dm.extendedResources().allocatable[RES] === '2');
  t.deepEqual(dm.extendedResources(), { capacity: { [RES]: '2' }, allocatable: { [RES]: '2' } });
});

test('Allocate through real gRPC: the answer carries envs, mounts, devices, annotations and CDI devices; a hanging plugin times out', async (t) => {
  const { dm, plugin } = await setup(t, { callTimeoutMs: 500 });
  const p = plugin({ preStartRequired: true, preferredAllocation: true });
  await p.start();
  await until('devices', () => dm.extendedResources().allocatable[RES] === '3');
  const mk = (uid: string, n: number): Pod => ({ metadata: { uid, name: uid, namespace: 'default' }, spec: { containers: [{ name: 'app', image: 'x', resources: { limits: { [RES]: String(n) } } }] } });
  await dm.admitPod(mk('p1', 2));
  // The sample plugin prefers the highest IDs.
  t.deepEqual(dm.devicesFor('p1', 'app'), [{ resourceName: RES, deviceIds: ['dev-1', 'dev-2'], numaNodes: [] }]);
  const o = await dm.runOptions('p1', 'app');
  t.deepEqual(o?.allocation.envs, { SAMPLE_DEVICES: 'dev-2,dev-1' });
  t.deepEqual(o?.allocation.cdiDevices, ['example.com/sample=dev-2', 'example.com/sample=dev-1']);
  t.deepEqual(o?.allocation.annotations, { 'example.com/sample-devices': 'dev-2,dev-1' });
  t.is(o?.allocation.devices.length, 2);
  t.is(o?.allocation.mounts.length, 2);
  t.is(p.calls['PreStartContainer'], 1);
  p.reconfigure({ resourceName: RES, devices: 3, allocateNoResponses: true });
  const broken = await t.throwsAsync(dm.admitPod(mk('p3', 1)), { instanceOf: DeviceAdmissionError });
  t.regex(broken.message, /Allocate answered 0 container responses for 1 container request/);
  p.reconfigure({ resourceName: RES, devices: 3, allocateDelayMs: 60_000 });
  const err = await t.throwsAsync(dm.admitPod(mk('p2', 1)), { instanceOf: DeviceAdmissionError });
  t.regex(err.message, /device plugin example\.com\/foo \(.*\): Allocate did not answer within 500 ms/);
  t.false(dm.hasPod('p2'));
});
