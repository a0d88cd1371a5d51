import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { kubeletStreamPath, streamContainer } from '../../../../apiserver/handlers/pod-connect';

const q = (s: string) => new URLSearchParams(s);

test("exec options become the kubelet's input/output/error/tty and repeated command; stdout and stderr default to true", (t) => {
  t.is(kubeletStreamPath('exec', 'ns', 'p', 'c', q('command=ls&command=-l')), '/exec/ns/p/c?output=1&error=1&command=ls&command=-l');
  t.is(kubeletStreamPath('exec', 'ns', 'p', 'c', q('command=sh&stdin=true&stdout=false&stderr=0&tty=1&container=c')), '/exec/ns/p/c?input=1&tty=1&command=sh');
  t.is(kubeletStreamPath('exec', 'ns', 'p', 'c', q('command=echo&command=a b&command=x%26y')), '/exec/ns/p/c?output=1&error=1&command=echo&command=a+b&command=x%26y');
  t.throws(() => kubeletStreamPath('exec', 'ns', 'p', 'c', q('stdout=true')), { instanceOf: ApiError, message: /command: Required value/ });
  t.throws(() => kubeletStreamPath('exec', 'ns', 'p', 'c', q('command=x&tty=maybe')), { instanceOf: ApiError });
});

test('attach takes no command; port-forward goes to /portForward with each port checked', (t) => {
  t.is(kubeletStreamPath('attach', 'ns', 'p', 'c', q('stdin=true&tty=true&command=ignored')), '/attach/ns/p/c?input=1&output=1&error=1&tty=1');
  t.is(kubeletStreamPath('portforward', 'ns', 'p', '', q('')), '/portForward/ns/p');
  t.is(kubeletStreamPath('portforward', 'ns', 'p', '', q('ports=80&ports=8080')), '/portForward/ns/p?port=80&port=8080');
  for (const bad of ['0', '65536', 'http', '-1', '1.5']) {
    t.throws(() => kubeletStreamPath('portforward', 'ns', 'p', '', q(`ports=${bad}`)), { instanceOf: ApiError, message: new RegExp(`ports: Invalid value: "${bad.replace('.', '\\.')}"`) });
  }
});

test('path segments are encoded', (t) => {
  t.is(kubeletStreamPath('exec', 'n/s', 'p?', 'c#', q('command=x')), '/exec/n%2Fs/p%3F/c%23?output=1&error=1&command=x');
});

const pod = (containers: string[], o: { init?: string[]; ephemeral?: string[]; annotation?: string } = {}): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', ...(o.annotation ? { annotations: { 'kubectl.kubernetes.io/default-container': o.annotation } } : {}) },
  spec: { containers: containers.map((name) => ({ name })), initContainers: (o.init ?? []).map((name) => ({ name })), ephemeralContainers: (o.ephemeral ?? []).map((name) => ({ name })) },
});

test('the container: named (any kind of container), the only one, the annotated default, else upstream 400s', (t) => {
  t.is(streamContainer(pod(['app']), ''), 'app');
  t.is(streamContainer(pod(['a', 'b'], { init: ['i'], ephemeral: ['debugger'] }), 'debugger'), 'debugger');
  t.is(streamContainer(pod(['a', 'b'], { init: ['i'] }), 'i'), 'i');
  t.is(streamContainer(pod(['a', 'b'], { annotation: 'b' }), ''), 'b');
  t.throws(() => streamContainer(pod(['a']), 'b'), { message: 'container b is not valid for pod web' });
  t.throws(() => streamContainer(pod(['a', 'b']), ''), { message: 'a container name must be specified for pod web, choose one of: [a b]' });
  t.throws(() => streamContainer(pod(['a', 'b'], { init: ['i'] }), ''), { message: 'a container name must be specified for pod web, choose one of: [a b] or one of the init containers: [i]' });
  // An annotation naming no container does not choose.
  t.throws(() => streamContainer(pod(['a', 'b'], { annotation: 'zzz' }), ''), { message: /choose one of/ });
});
