import test from 'ava';
import { createRuntimeService } from '../../../../agent/cri/factory';
import { GrpcRuntimeService } from '../../../../agent/cri/grpc-client';
import { Simulator } from '../../../../agent/cri/simulator';

test('sim:// gives the simulator named after the endpoint; unix sockets give the gRPC client', async (t) => {
  const sim = createRuntimeService('sim://node-3', '');
  t.true(sim instanceof Simulator);
  t.is((await sim.connect()).runtimeApiVersion, 'v1');
  sim.close();
  const old = createRuntimeService('sim://node-3', '', { simulator: { runtimeApiVersion: 'v0' } });
  await t.throwsAsync(old.connect(), { message: /at sim:\/\/node-3 speaks CRI v0/ });
  const same = createRuntimeService('sim://a', 'sim://a', { simulator: { runtimeName: 'custom' } });
  t.is((await same.version()).runtimeName, 'custom');
  same.close();
  const grpc = createRuntimeService('unix:///run/containerd/containerd.sock', '/run/other.sock');
  t.true(grpc instanceof GrpcRuntimeService);
  grpc.close();
});

test('mixed or unknown endpoints are refused', (t) => {
  t.throws(() => createRuntimeService('sim://a', 'unix:///x.sock'), { message: /must both name the same sim:\/\/ runtime/ });
  t.throws(() => createRuntimeService('unix:///x.sock', 'sim://a'), { message: /must both name the same sim:\/\/ runtime/ });
  t.throws(() => createRuntimeService('sim://a', 'sim://b'), { message: /must both name the same sim:\/\/ runtime/ });
  t.throws(() => createRuntimeService('tcp://1.2.3.4:5', ''), { message: /tcp:\/\/1\.2\.3\.4:5/ });
});
