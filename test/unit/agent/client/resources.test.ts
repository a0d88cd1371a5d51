import test from 'ava';
import { csrResource, leasesResource, nodesResource, resourcePath } from '../../../../agent/client/resources';

test('paths for core and grouped, cluster-scoped and namespaced resources', (t) => {
  t.is(resourcePath(nodesResource), '/api/v1/nodes');
  t.is(resourcePath(nodesResource, { name: 'n1', subresource: 'status' }), '/api/v1/nodes/n1/status');
  t.is(resourcePath(leasesResource, { namespace: 'svc-node-lease', name: 'n1' }), '/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/n1');
  t.is(resourcePath(leasesResource), '/apis/coordination.svc.io/v1/leases');
  t.is(resourcePath(csrResource, { name: 'node-csr-1' }), '/apis/certificates.svc.io/v1/certificatesigningrequests/node-csr-1');
});

test('scope mistakes are programming errors', (t) => {
  t.throws(() => resourcePath(nodesResource, { namespace: 'x', name: 'n' }), { message: /cluster-scoped/ });
  t.throws(() => resourcePath(leasesResource, { name: 'n' }), { message: /namespace is required/ });
  t.throws(() => resourcePath(nodesResource, { name: '' }), { message: /empty Node name/ });
});
