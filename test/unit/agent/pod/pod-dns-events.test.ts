/**
 * Pods' DNS through the pod pipeline: the sandbox gets the node's resolver configuration for a
 * Default pod and the cluster's for ClusterFirst; DNS warnings (MissingClusterDNS,
 * DNSConfigForming) are recorded on the pod once per sandbox, as the kubelet's events.
 */
import test from 'ava';
import { RecordingRecorder } from '../../../helpers/recording-recorder';
import { isRunningReady, startHarness } from './harness';

const hostDns = () => Promise.resolve({ servers: ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4'], searches: ['corp.example'], options: ['ndots:1'] });

test('Default pod: the node resolv.conf cut to 3 nameservers with one DNSConfigForming event; ClusterFirst with a clusterDomain but no clusterDNS: MissingClusterDNS', async (t) => {
  const recorder = new RecordingRecorder();
  const h = await startHarness({ manager: { recorder, hostDns, clusterDomain: 'cluster.local' } });
  try {
    h.createPod('host-dns', { dnsPolicy: 'Default', containers: [{ name: 'c', image: 'svc.local/app:1' }] });
    h.createPod('cluster-dns', { containers: [{ name: 'c', image: 'svc.local/app:1' }] });
    t.true(await h.until(() => isRunningReady(h.status('host-dns')) && isRunningReady(h.status('cluster-dns'))));
    const sandbox = h.sim.sandboxes.find((s) => s.metadata.name === 'host-dns')!;
    t.deepEqual(sandbox.dnsConfig, { servers: ['192.0.2.1', '192.0.2.2', '192.0.2.3'], searches: ['corp.example'], options: ['ndots:1'] });
    const events = recorder.events.filter((e) => e.regarding.kind === 'Pod' && (e.reason === 'DNSConfigForming' || e.reason === 'MissingClusterDNS'));
    t.deepEqual(
      events.map((e) => `${e.regarding.name} ${e.type} ${e.reason}`).sort(),
      ['cluster-dns Warning DNSConfigForming', 'cluster-dns Warning MissingClusterDNS', 'host-dns Warning DNSConfigForming'],
      'once per pod: containers started later do not repeat them',
    );
    t.deepEqual(
      recorder.events.filter((e) => e.regarding.kind === 'Node' && e.reason === 'MissingClusterDNS').map((e) => e.message),
      ['kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.'],
      'and on the Node, as upstream',
    );
    t.is(events.find((e) => e.regarding.name === 'host-dns')!.message, 'Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 192.0.2.1 192.0.2.2 192.0.2.3');
  } finally {
    await h.stop();
  }
});

test('ClusterFirst with clusterDNS: the cluster server, the cluster search paths then the node ones, ndots:5', async (t) => {
  const h = await startHarness({ manager: { hostDns, clusterDNS: ['169.254.20.10'], clusterDomain: 'cluster.local' } });
  try {
    h.createPod('web', { containers: [{ name: 'c', image: 'svc.local/app:1' }] });
    t.true(await h.until(() => isRunningReady(h.status('web'))));
    t.deepEqual(h.sim.sandboxes.find((s) => s.metadata.name === 'web')!.dnsConfig, {
      servers: ['169.254.20.10'],
      searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example'],
      options: ['ndots:5'],
    });
  } finally {
    await h.stop();
  }
});
