import test from 'ava';
import { decide, parseAuditPolicy } from '../../../../../apiserver/filters/audit/policy';
import { parseRequestInfo } from '../../../../../apiserver/server/request-info';

const info = (method: string, path: string) => parseRequestInfo(method, path, new URLSearchParams());
const alice = { username: 'alice', groups: ['dev', 'system:authenticated'] };

const policy = parseAuditPolicy(
  `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: [system:kube-proxy]
- level: Metadata
  resources: [{group: "", resources: [secrets, configmaps/status]}]
- level: RequestResponse
  omitManagedFields: true
  resources: [{group: rbac.authorization.k8s.io}]
- level: Request
  verbs: [create]
  namespaces: [team]
  omitStages: [ResponseStarted]
- level: Metadata
  nonResourceURLs: [/healthz*, /version]
- level: Metadata
  userGroups: [dev]
  resources: [{group: apps, resources: ["*/scale"]}]
`,
  'policy.yaml',
);

test('the first matching rule decides; stages are the policy\'s and the rule\'s; nothing matched is None', (t) => {
  t.is(decide(policy, { username: 'system:kube-proxy', groups: [] }, info('GET', '/api/v1/secrets')).level, 'None');
  const secrets = decide(policy, alice, info('GET', '/api/v1/namespaces/team/secrets/s'));
  t.is(secrets.level, 'Metadata');
  t.deepEqual([...secrets.omitStages], ['RequestReceived']);
  // "secrets" does not match a sub-resource of secrets; "configmaps/status" matches only that one.
  t.is(decide(policy, alice, info('GET', '/api/v1/namespaces/x/configmaps/c/status')).level, 'Metadata');
  t.is(decide(policy, alice, info('GET', '/api/v1/namespaces/x/configmaps/c')).level, 'None');
  const create = decide(policy, alice, info('POST', '/api/v1/namespaces/team/pods'));
  t.is(create.level, 'Request');
  t.deepEqual([...create.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  t.is(decide(policy, alice, info('POST', '/api/v1/namespaces/other/pods')).level, 'None');
});

test('a group named in either spelling matches the request; omitManagedFields is the rule\'s', (t) => {
  const svc = decide(policy, alice, info('GET', '/apis/rbac.authorization.svc.io/v1/clusterroles'));
  const k8s = decide(policy, alice, info('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles'));
  t.is(svc.level, 'RequestResponse');
  t.is(k8s.level, 'RequestResponse');
  t.true(svc.omitManagedFields);
});

test('non-resource URLs match exactly or by a trailing *, and never resource requests; */scale matches any scale', (t) => {
  t.is(decide(policy, alice, info('GET', '/healthz/ready')).level, 'Metadata');
  t.is(decide(policy, alice, info('GET', '/version')).level, 'Metadata');
  t.is(decide(policy, alice, info('GET', '/versions')).level, 'None');
  t.is(decide(policy, alice, info('PUT', '/apis/apps/v1/namespaces/x/deployments/d/scale')).level, 'Metadata');
  t.is(decide(policy, { username: 'bob', groups: [] }, info('PUT', '/apis/apps/v1/namespaces/x/deployments/d/scale')).level, 'None');
  // Failed authentication: no user; rules naming users or groups do not match.
  t.is(decide(policy, undefined, info('GET', '/version')).level, 'Metadata');
});

test('bad policies are refused naming the file and the field', (t) => {
  const bad = (body: string) => () => parseAuditPolicy(`apiVersion: audit.k8s.io/v1\nkind: Policy\n${body}`, 'p.yaml');
  t.throws(bad('rules:\n- level: Verbose\n'), { message: 'p.yaml: rules[0].level: Unsupported value: "Verbose": supported values: "None", "Metadata", "Request", "RequestResponse"' });
  t.throws(bad('rules:\n- users: [a]\n'), { message: 'p.yaml: rules[0].level: Required value' });
  t.throws(bad('rules:\n- level: None\n  omitStages: [Done]\n'), { message: /p\.yaml: rules\[0\]\.omitStages\[0\]: Unsupported value: "Done"/ });
  t.throws(bad('rules:\n- level: None\n  nonResourceURLs: [/x]\n  namespaces: [a]\n'), { message: /rules cannot apply to both regular resources and non-resource URLs/ });
  t.throws(bad('rules:\n- level: None\n  verb: [get]\n'), { message: 'p.yaml: rules[0].verb: unknown field' });
  t.throws(bad(''), { message: 'p.yaml: rules: Required value' });
  t.throws(() => parseAuditPolicy('kind: Policy\napiVersion: audit.k8s.io/v2\nrules: []\n', 'p.yaml'), { message: /apiVersion: Unsupported value: "audit.k8s.io\/v2"/ });
});
