import test from 'ava';
import { PodManagerPods, resourceContainers } from '../../../../agent/podresources/pod-manager-pods';
import type { Pod } from '../../../../agent/api/core-v1';

function pod(name: string, extra: Partial<Pod['spec']> = {}, namespace?: string): Pod {
  return { metadata: { name, uid: `uid-${name}`, ...(namespace ? { namespace } : {}) }, spec: { containers: [{ name: 'a' }, { name: 'b' }], ...extra } };
}

test('containers: sidecars (restartable init containers) first, then app containers; plain init containers left out', (t) => {
  const p = pod('x', { initContainers: [{ name: 'setup' }, { name: 'proxy', restartPolicy: 'Always' }] });
  t.deepEqual(resourceContainers(p), ['proxy', 'a', 'b']);
});

test('the provider maps the pod manager\'s pods (namespace defaults to default)', (t) => {
  const active = [pod('one', {}, 'ml'), pod('two')];
  const all = [...active, pod('leaving')];
  const provider = new PodManagerPods({
    activePods: () => active,
    podByName: (ns, name) => all.find((p) => (p.metadata.namespace ?? 'default') === ns && p.metadata.name === name),
  });
  t.deepEqual(provider.activePods(), [
    { namespace: 'ml', name: 'one', uid: 'uid-one', containers: ['a', 'b'] },
    { namespace: 'default', name: 'two', uid: 'uid-two', containers: ['a', 'b'] },
  ]);
  t.is(provider.podByName('default', 'leaving')?.uid, 'uid-leaving');
  t.is(provider.podByName('default', 'one'), undefined);
});
