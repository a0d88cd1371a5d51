import test from 'ava';
import { isKubeletLabel, isMirrorPod, isNodeRestrictionLabel, isReservedLabel, sameTaintKey, wellKnownNodeLabels } from '../../../../apiserver/api/well-known';

// Issue 17, item 3: each well-known name in svc.io and upstream's kubernetes.io spelling.

test('a mirror pod is marked by svc.io/config.mirror or upstream kubernetes.io/config.mirror, whatever the value', (t) => {
  t.true(isMirrorPod({ metadata: { annotations: { 'svc.io/config.mirror': '' } } }));
  t.true(isMirrorPod({ metadata: { annotations: { 'kubernetes.io/config.mirror': 'hash' } } }));
  t.false(isMirrorPod({ metadata: { annotations: { 'k8s.io/other': 'x', 'kubernetes.io/config.source': 'file' } } }));
  t.false(isMirrorPod({ metadata: {} }));
});

test('kubelet labels in both spellings; reserved domains are svc.io, kubernetes.io and k8s.io', (t) => {
  for (const k of ['svc.io/hostname', 'kubernetes.io/hostname', 'kubernetes.io/os', 'kubernetes.io/arch', 'beta.kubernetes.io/os', 'node.kubernetes.io/instance-type', 'topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/region', 'node.kubernetes.io/anything', 'x.node.kubernetes.io/y', 'kubelet.kubernetes.io/z']) {
    t.true(isKubeletLabel(k), k);
    t.true(isReservedLabel(k), k);
  }
  for (const k of ['kubernetes.io/custom', 'node-role.kubernetes.io/control-plane', 'k8s.io/x', 'x.k8s.io/y', 'svc.io/other']) {
    t.false(isKubeletLabel(k), k);
    t.true(isReservedLabel(k), k);
  }
  for (const k of ['example.com/x', 'plain', 'notkubernetes.io/x']) t.false(isReservedLabel(k), k);
  t.true(isNodeRestrictionLabel('node-restriction.kubernetes.io/pool'));
  t.true(isNodeRestrictionLabel('a.node-restriction.svc.io/pool'));
  t.false(isNodeRestrictionLabel('node.kubernetes.io/pool'));
});

test('the agent labels its Node with both families', (t) => {
  t.deepEqual(wellKnownNodeLabels('n1', 'linux', 'arm64'), {
    'svc.io/arch': 'arm64',
    'kubernetes.io/arch': 'arm64',
    'svc.io/hostname': 'n1',
    'kubernetes.io/hostname': 'n1',
    'svc.io/os': 'linux',
    'kubernetes.io/os': 'linux',
  });
});

test('taint keys are the same in either spelling', (t) => {
  t.true(sameTaintKey('node.kubernetes.io/not-ready', 'node.svc.io/not-ready'));
  t.true(sameTaintKey('node.svc.io/unschedulable', 'node.kubernetes.io/unschedulable'));
  t.false(sameTaintKey('node.kubernetes.io/not-ready', 'node.svc.io/unreachable'));
  t.false(sameTaintKey('dedicated', 'node.svc.io/dedicated'));
});
