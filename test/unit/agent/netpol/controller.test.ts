/** The NetworkPolicy loop: first sync after the lists, minimum interval, no re-apply of an unchanged table, retries, cleanup. */
import test from 'ava';
import type { KObject } from '../../../../apiserver/api/types';
import { namespacesResource } from '../../../../agent/client/resources';
import { NETPOL_HEALTH_TIMEOUT_MS, NetworkPolicyController, allPodsResource, networkPoliciesResource } from '../../../../agent/netpol/controller';
import { RecordingNft } from '../proxy/fixtures';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { MemLog } from '../node/fakes/mem-log';
import { FakeClock } from '../../../helpers/fake-clock';

const pod = (name: string, ip: string, labels: Record<string, string> = {}): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
  status: { podIP: ip },
});
const deny = (name: string): KObject => ({ apiVersion: 'networking.svc.io/v1', kind: 'NetworkPolicy', metadata: { name, namespace: 'default' }, spec: { podSelector: {} } });

function setup() {
  const api = new FakeApiClient();
  const clock = new FakeClock();
  const nft = new RecordingNft();
  const log = new MemLog();
  const controller = new NetworkPolicyController({ client: api, nodeName: 'n1', clock, log, nft, minSyncPeriodMs: 1000 });
  const ac = new AbortController();
  api.seed(namespacesResource, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  return { api, clock, nft, log, controller, ac, run: () => controller.run(ac.signal) };
}

test('after the lists, one sync replacing the table with what they hold', async (t) => {
  const s = setup();
  s.api.seed(allPodsResource, pod('web', '10.0.0.5'));
  s.api.seed(networkPoliciesResource, deny('deny'));
  const done = s.run();
  await s.clock.advanceUntil(() => s.nft.scripts.length > 0, 5000);
  t.true(s.nft.scripts[0].startsWith('add table inet svc-netpol\ndelete table inet svc-netpol\nadd table inet svc-netpol\n'));
  t.regex(s.nft.scripts[0], /add rule inet svc-netpol ingress-10_0_0_5 drop/);
  s.ac.abort();
  await done;
});

test('changes within the minimum interval are applied together once it has passed; an unchanged table is not applied again', async (t) => {
  const s = setup();
  const done = s.run();
  await s.clock.advanceUntil(() => s.nft.scripts.length === 1, 5000, 10);
  s.api.seed(allPodsResource, pod('web', '10.0.0.5'));
  await s.clock.advance(100);
  s.api.seed(networkPoliciesResource, deny('deny'));
  await s.clock.advance(100);
  t.is(s.nft.scripts.length, 1, 'nothing before the interval');
  await s.clock.advanceUntil(() => s.nft.scripts.length === 2, 2000, 10);
  t.regex(s.nft.scripts[1], /ingress-10_0_0_5 drop/);
  const syncs = s.controller.syncCount();
  // A pod on another node that no rule names: a sync, and the same table.
  s.api.seed(allPodsResource, { ...pod('elsewhere', '10.0.9.9'), spec: { nodeName: 'n2', containers: [{ name: 'c' }] } });
  await s.clock.advanceUntil(() => s.controller.syncCount() > syncs, 5000, 10);
  await s.clock.advance(3000);
  t.is(s.nft.scripts.length, 2, 'the same table is not applied again');
  s.ac.abort();
  await done;
});

test('a refused script is retried; when run ends the table is deleted', async (t) => {
  const s = setup();
  s.nft.failures = 2;
  const done = s.run();
  await s.clock.advanceUntil(() => s.nft.scripts.length === 1, 60_000, 100);
  t.is(s.log.find('syncing the network policy rules failed; retrying').length, 2);
  s.ac.abort();
  await done;
  t.is(s.nft.scripts.at(-1), 'add table inet svc-netpol\ndelete table inet svc-netpol\n');
  t.truthy(s.log.find('network policy rules removed')[0]);
});

test('unhealthy only once a change has waited too long for a successful sync', async (t) => {
  const s = setup();
  s.api.seed(allPodsResource, pod('web', '10.0.0.5')); // so that the policy below changes the table
  const done = s.run();
  await s.clock.advanceUntil(() => s.nft.scripts.length === 1, 5000, 10);
  t.is(s.controller.health(), undefined);
  s.nft.failures = 1_000_000;
  s.api.seed(networkPoliciesResource, deny('deny'));
  await s.clock.advance(2000);
  t.is(s.controller.health(), undefined, 'not yet: within the timeout');
  await s.clock.advance(NETPOL_HEALTH_TIMEOUT_MS);
  t.regex(s.controller.health() ?? '', /network policy rules not synced for \d+s after a change/);
  s.nft.failures = 0;
  await s.clock.advanceUntil(() => s.nft.scripts.length === 2, 60_000, 100);
  t.is(s.controller.health(), undefined);
  s.ac.abort();
  await done;
});
