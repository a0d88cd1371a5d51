import test from 'ava';
import { endpointText, parseEndpoint } from '../../../../agent/cri/endpoint';

test('unix endpoints, bare paths and sim:// are accepted', (t) => {
  t.deepEqual(parseEndpoint('unix:///run/containerd/containerd.sock'), {
    kind: 'unix',
    path: '/run/containerd/containerd.sock',
    target: 'unix:///run/containerd/containerd.sock',
  });
  t.deepEqual(parseEndpoint('/run/crio/crio.sock'), { kind: 'unix', path: '/run/crio/crio.sock', target: 'unix:///run/crio/crio.sock' });
  t.deepEqual(parseEndpoint('sim://'), { kind: 'sim', name: 'default' });
  t.deepEqual(parseEndpoint('sim://node-7'), { kind: 'sim', name: 'node-7' });
  t.is(endpointText(parseEndpoint('sim://x')), 'sim://x');
});

test('other forms are refused with the value in the message', (t) => {
  for (const bad of ['tcp://127.0.0.1:1234', 'npipe:////./pipe/x', 'unix://relative.sock', 'relative.sock', '']) {
    t.throws(() => parseEndpoint(bad), { message: new RegExp(JSON.stringify(bad).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')) }, bad);
  }
});
