import test from 'ava';
import { isImageId, normalizeImageRef, parseImageRef } from '../../../../agent/cri/image-ref';

const ID = `sha256:${'a'.repeat(64)}`;

test('normalises references as containerd does', (t) => {
  const cases: [string, string][] = [
    ['busybox', 'docker.io/library/busybox:latest'],
    ['busybox:1.36', 'docker.io/library/busybox:1.36'],
    ['me/app', 'docker.io/me/app:latest'],
    ['docker.io/busybox', 'docker.io/library/busybox:latest'],
    ['index.docker.io/library/busybox', 'docker.io/library/busybox:latest'],
    ['registry.k8s.io/pause:3.10', 'registry.k8s.io/pause:3.10'],
    ['localhost/app', 'localhost/app:latest'],
    ['localhost:5000/app:v1', 'localhost:5000/app:v1'],
    ['svc.local/busybox:latest', 'svc.local/busybox:latest'],
    [`busybox@sha256:${'b'.repeat(64)}`, `docker.io/library/busybox@sha256:${'b'.repeat(64)}`],
    [`busybox:1@sha256:${'b'.repeat(64)}`, `docker.io/library/busybox:1@sha256:${'b'.repeat(64)}`],
    [ID, ID],
  ];
  for (const [input, want] of cases) t.is(normalizeImageRef(input), want, input);
});

test('parses parts and rejects malformed references', (t) => {
  t.deepEqual(parseImageRef('quay.io/org/app:v2'), { domain: 'quay.io', path: 'org/app', tag: 'v2' });
  t.true(isImageId(ID));
  t.false(isImageId('sha256:abc'));
  for (const bad of ['', 'Busybox', 'a b', 'busybox:', 'busybox@sha256:xyz', 'UPPER/case']) {
    t.throws(() => normalizeImageRef(bad), undefined, bad);
  }
});
