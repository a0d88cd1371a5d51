import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { proxyPath } from '../../../../apiserver/handlers/proxy-target';
import { forwardedHeaders } from '../../../../apiserver/handlers/proxy-headers';

test('the agent path (proxyPath, shared by every proxy) is what follows /nodes/{name}/proxy, still encoded; nothing means /', (t) => {
  t.is(proxyPath('/api/v1/nodes/n1/proxy/healthz'), '/healthz');
  t.is(proxyPath('/api/v1/nodes/n1/proxy/checkpoint/default/web/app'), '/checkpoint/default/web/app');
  t.is(proxyPath('/api/v1/nodes/n1/proxy/containerLogs/default/a%2Fb/c'), '/containerLogs/default/a%2Fb/c');
  t.is(proxyPath('/api/v1/nodes/n1/proxy'), '/');
  t.is(proxyPath('/api/v1/nodes/n1/proxy/'), '/');
  t.throws(() => proxyPath('/api/v1/nodes/n1/proxyx'), { instanceOf: ApiError });
  t.throws(() => proxyPath('/api/v1/nodes/n1/status'), { instanceOf: ApiError });
});

test("the caller's credentials and hop-by-hop headers are not forwarded; content headers are", (t) => {
  const out = forwardedHeaders({
    authorization: 'Bearer secret',
    cookie: 'a=b',
    'impersonate-user': 'root',
    'impersonate-group': 'system:masters',
    'x-remote-user': 'root',
    connection: 'keep-alive',
    host: 'apiserver:6443',
    'content-type': 'application/json',
    'content-length': '2',
    accept: 'application/json',
    'user-agent': 'kubectl',
  });
  t.deepEqual(out, { 'content-type': 'application/json', 'content-length': '2', accept: 'application/json', 'user-agent': 'kubectl' });
});
