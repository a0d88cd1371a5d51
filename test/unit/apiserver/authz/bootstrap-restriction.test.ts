import test from 'ava';
import { BootstrapRestriction } from '../../../../apiserver/authz/bootstrap-restriction';
import { AuthenticatedAllow } from '../../../../apiserver/authz/always-allow';
import { AuthorizerChain } from '../../../../apiserver/authz/chain';
import type { UserInfo } from '../../../../apiserver/authn/user';
import { parseRequestInfo } from '../../../../apiserver/server/request-info';

const bootstrapper: UserInfo = { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:worker', 'system:authenticated'] };
const node: UserInfo = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };

async function decide(user: UserInfo, method: string, path: string, query = ''): Promise<string> {
  const info = parseRequestInfo(method, path, new URLSearchParams(query));
  return (await new BootstrapRestriction().authorize({ user, info })).decision;
}

const CSRS = '/apis/certificates.svc.io/v1/certificatesigningrequests';

test('bootstrappers may create, get, list and watch CSRs (the next authorizer decides)', async (t) => {
  t.is(await decide(bootstrapper, 'POST', CSRS), 'no-opinion');
  t.is(await decide(bootstrapper, 'GET', `${CSRS}/node-csr-1`), 'no-opinion');
  t.is(await decide(bootstrapper, 'GET', CSRS), 'no-opinion');
  t.is(await decide(bootstrapper, 'GET', CSRS, 'watch=1&fieldSelector=metadata.name%3Dnode-csr-1'), 'no-opinion');
});

test('bootstrappers may not approve, update, patch or delete CSRs', async (t) => {
  t.is(await decide(bootstrapper, 'PUT', `${CSRS}/node-csr-1/approval`), 'deny');
  t.is(await decide(bootstrapper, 'PUT', `${CSRS}/node-csr-1/status`), 'deny');
  t.is(await decide(bootstrapper, 'PUT', `${CSRS}/node-csr-1`), 'deny');
  t.is(await decide(bootstrapper, 'PATCH', `${CSRS}/node-csr-1`), 'deny');
  t.is(await decide(bootstrapper, 'DELETE', `${CSRS}/node-csr-1`), 'deny');
  t.is(await decide(bootstrapper, 'GET', `${CSRS}/node-csr-1/approval`), 'deny');
});

test('bootstrappers may create selfsubjectreviews only', async (t) => {
  t.is(await decide(bootstrapper, 'POST', '/apis/authentication.svc.io/v1/selfsubjectreviews'), 'no-opinion');
  t.is(await decide(bootstrapper, 'POST', '/apis/authentication.svc.io/v1/tokenreviews'), 'deny');
});

test('bootstrappers are denied every other resource', async (t) => {
  t.is(await decide(bootstrapper, 'GET', '/api/v1/nodes'), 'deny');
  t.is(await decide(bootstrapper, 'POST', '/api/v1/nodes'), 'deny');
  t.is(await decide(bootstrapper, 'GET', '/api/v1/namespaces/svc-system/secrets/bootstrap-token-abcdef'), 'deny');
  t.is(await decide(bootstrapper, 'PUT', '/apis/coordination.svc.io/v1/namespaces/svc-node-lease/leases/n1'), 'deny');
});

test('bootstrappers may read discovery, version and health, nothing else outside the API', async (t) => {
  for (const p of ['/api', '/api/v1', '/apis', '/apis/certificates.svc.io', '/apis/certificates.svc.io/v1', '/version', '/healthz', '/livez', '/readyz', '/readyz/etcd', '/openapi/v2', '/openapi/v3/apis/certificates.svc.io/v1']) {
    t.is(await decide(bootstrapper, 'GET', p), 'no-opinion', p);
  }
  t.is(await decide(bootstrapper, 'GET', '/metrics'), 'deny');
  t.is(await decide(bootstrapper, 'GET', '/debug/pprof'), 'deny');
  t.is(await decide(bootstrapper, 'POST', '/version'), 'deny');
});

test('everyone else gets no opinion', async (t) => {
  t.is(await decide(node, 'GET', '/api/v1/nodes'), 'no-opinion');
  t.is(await decide(node, 'DELETE', `${CSRS}/x`), 'no-opinion');
  t.is(await decide({ username: 'system:anonymous', groups: ['system:unauthenticated'] }, 'GET', '/api/v1/secrets'), 'no-opinion');
});

test('placed first in a chain with AuthenticatedAllow: a bootstrapper is forbidden outside its allowance and allowed inside it', async (t) => {
  const chain = new AuthorizerChain([new BootstrapRestriction(), new AuthenticatedAllow()]);
  const info = (m: string, p: string) => parseRequestInfo(m, p, new URLSearchParams());
  await t.notThrowsAsync(chain.authorize({ user: bootstrapper, info: info('POST', CSRS) }));
  const err = await t.throwsAsync(chain.authorize({ user: bootstrapper, info: info('GET', '/api/v1/nodes') }));
  t.regex(err!.message, /cannot list resource "nodes".*bootstrap tokens may only request node client certificates/);
  await t.notThrowsAsync(chain.authorize({ user: node, info: info('GET', '/api/v1/nodes') }));
});
