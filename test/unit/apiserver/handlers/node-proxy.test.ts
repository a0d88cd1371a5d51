import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { agentPath } from '../../../../apiserver/handlers/node-proxy';
import { forwardedHeaders } from '../../../../apiserver/handlers/proxy-headers';

test('the agent path is what follows /nodes/{name}/proxy, still encoded; nothing means /', (t) => {
  t.is(agentPath('/api/v1/nodes/n1/proxy/healthz', 'n1'), '/healthz');
  t.is(agentPath('/api/v1/nodes/n1/proxy/checkpoint/default/web/app', 'n1'), '/checkpoint/default/web/app');
  t.is(agentPath('/api/v1/nodes/n1/proxy/containerLogs/default/a%2Fb/c', 'n1'), '/containerLogs/default/a%2Fb/c');
  t.is(agentPath('/api/v1/nodes/n1/proxy', 'n1'), '/');
  t.is(agentPath('/api/v1/nodes/n1/proxy/', 'n1'), '/');
  t.throws(() => agentPath('/api/v1/nodes/n1/proxyx', 'n1'), { instanceOf: ApiError });
  t.throws(() => agentPath('/api/v1/nodes/n1/status', 'n1'), { instanceOf: ApiError });
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
