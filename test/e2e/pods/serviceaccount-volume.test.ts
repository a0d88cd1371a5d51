/**
 * Service account token volumes end to end on real processes: a real svc-apiserver (default
 * Node,RBAC authorization, --service-account-lookup on by default) and a real svc-node on the CRI
 * simulator, the node authenticating with its own system:node client certificate so that the
 * Node authorizer and NodeRestriction judge its token requests. A pod is admitted with the
 * projected kube-api-access volume, the node writes token, ca.crt and namespace under
 * <root-dir>/pods/<uid>/volumes/svc.io~projected/, the token authenticates as the pod's service
 * account and stops working once the pod is deleted. A downwardAPI volume and a
 * persistentVolumeClaim (unbound, then bound to a hostPath PV) are checked alongside.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Agent } from 'undici';
import { kubeconfig } from '../../../apiserver/pki/bootstrap';
import { issue } from '../../../apiserver/pki/certs';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';
import { eventually, startAgent, type AgentProcess } from '../agent/agent-process';

const NODE = 'e2e-sa-vol';

interface Env {
  api: RunningApiServer;
  agent: AgentProcess;
  dir: string;
  rootDir: string;
  /** The node's own identity, and another node's. */
  nodeTls: Agent;
  otherTls: Agent;
  bare: Agent;
}
let env: Env | undefined;
function e(): Env {
  if (!env) throw new Error('the environment did not start (see the before hook)');
  return env;
}

async function nodeIdentity(api: RunningApiServer, name: string): Promise<{ certPem: string; keyPem: string }> {
  const ca = { certPem: readFileSync(path.join(api.dataDir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(path.join(api.dataDir, 'pki', 'ca.key'), 'utf8') };
  return issue(ca, { commonName: `system:node:${name}`, organizations: ['system:nodes'], usage: 'client', validityMs: 3600_000 });
}

test.before(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-savol-e2e-'));
  const api = await startApiServer();
  let agent: AgentProcess | undefined;
  try {
    const mine = await nodeIdentity(api, NODE);
    const other = await nodeIdentity(api, 'e2e-sa-other');
    const kc = path.join(dir, 'node.kubeconfig');
    writeFileSync(kc, kubeconfig({ server: api.url, caPem: api.caPem, user: `system:node:${NODE}`, ...mine }), { mode: 0o600 });
    agent = startAgent({ dir, nodeName: NODE, kubeconfig: kc, args: ['--node-ip=127.0.0.1'], configLines: ['nodeStatusUpdateFrequency: 1s'] });
    await agent.waitForLog('node registered and heartbeating', 60_000);
    env = {
      api,
      agent,
      dir,
      rootDir: path.join(dir, 'root'),
      nodeTls: new Agent({ connect: { ca: api.caPem, cert: mine.certPem, key: mine.keyPem, servername: 'localhost' } }),
      otherTls: new Agent({ connect: { ca: api.caPem, cert: other.certPem, key: other.keyPem, servername: 'localhost' } }),
      bare: new Agent({ connect: { ca: api.caPem, servername: 'localhost' } }),
    };
  } catch (err) {
    await agent?.stop('SIGKILL');
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
});

test.after.always(async () => {
  if (!env) return;
  await env.agent.stop('SIGTERM');
  await Promise.all([env.nodeTls.close(), env.otherTls.close(), env.bare.close()]);
  await env.api.stop();
  rmSync(env.dir, { recursive: true, force: true });
});

type Pod = {
  metadata: { name: string; uid: string };
  spec: { volumes?: { name: string; projected?: { defaultMode?: number; sources: Record<string, any>[] }; downwardAPI?: unknown }[]; containers: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[] };
  status: { phase?: string };
};

async function createPod(name: string, extra: Record<string, unknown> = {}, containerExtra: Record<string, unknown> = {}): Promise<Pod> {
  const { api } = e();
  const body = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: name, tier: 'web' } },
    spec: {
      nodeName: NODE,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image: 'svc.local/busybox:latest', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], ...containerExtra }],
      ...extra,
    },
  };
  const r = await call(api.admin, 'POST', `${api.url}/api/v1/namespaces/default/pods`, body);
  if (r.status !== 201) throw new Error(`creating pod ${name}: ${r.status} ${r.text}`);
  return r.body as Pod;
}

async function running(name: string): Promise<Pod> {
  const { api } = e();
  return eventually(`pod ${name} running`, async () => {
    const r = await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/default/pods/${name}`);
    return (r.body as Pod).status.phase === 'Running' ? (r.body as Pod) : undefined;
  }, 90_000, 300);
}

async function tokenReview(token: string): Promise<{ authenticated?: boolean; user?: { username: string; groups?: string[]; extra?: Record<string, string[]> } }> {
  const { api } = e();
  const r = await call(api.admin, 'POST', `${api.url}/apis/authentication.svc.io/v1/tokenreviews`, { apiVersion: 'authentication.svc.io/v1', kind: 'TokenReview', spec: { token } });
  if (r.status !== 201) throw new Error(`TokenReview: ${r.status} ${r.text}`);
  return r.body.status;
}

const tokenPath = (uid: string, volume: string, file: string) => path.join(e().rootDir, 'pods', uid, 'volumes', 'svc.io~projected', volume, file);

test.serial('a pod gets the token volume; the node writes token, ca.crt and namespace; the token is the pod\'s service account until the pod is deleted', async (t) => {
  const { api, bare } = e();
  const created = await createPod('sa-pod');
  const vol = created.spec.volumes?.find((v) => v.name.startsWith('kube-api-access-'));
  t.truthy(vol, JSON.stringify(created.spec.volumes));
  t.regex(vol!.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  t.deepEqual(vol!.projected!.sources.map((s) => Object.keys(s)[0]), ['serviceAccountToken', 'configMap', 'downwardAPI']);
  t.deepEqual(created.spec.containers[0].volumeMounts, [{ name: vol!.name, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }]);

  const pod = await running('sa-pod');
  const uid = pod.metadata.uid;
  const token = await eventually('token file', () => {
    try {
      return readFileSync(tokenPath(uid, vol!.name, 'token'), 'utf8');
    } catch {
      return undefined;
    }
  });
  t.is(readFileSync(tokenPath(uid, vol!.name, 'ca.crt'), 'utf8'), api.caPem, 'the cluster CA, from the kube-root-ca.crt ConfigMap');
  t.is(readFileSync(tokenPath(uid, vol!.name, 'namespace'), 'utf8'), 'default');
  for (const f of ['token', 'ca.crt', 'namespace']) t.is(statSync(tokenPath(uid, vol!.name, f)).mode & 0o777, 0o644, `${f}: the volume's defaultMode (0644, as upstream)`);
  t.is(statSync(path.join(e().rootDir, 'pods', uid)).mode & 0o777, 0o750, 'the pod directory is closed to other host users');

  const review = await tokenReview(token);
  t.true(review.authenticated, JSON.stringify(review));
  t.is(review.user!.username, 'system:serviceaccount:default:default');
  t.true(review.user!.groups!.includes('system:serviceaccounts:default'));
  t.deepEqual(review.user!.extra?.['authentication.kubernetes.io/pod-name'] ?? review.user!.extra?.['authentication.svc.io/pod-name'], ['sa-pod']);

  // The token works as a bearer credential against the API server itself.
  const self = await call(bare, 'POST', `${api.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' }, { authorization: `Bearer ${token}` });
  t.is(self.status, 201, self.text);
  t.is(self.body.status.userInfo.username, 'system:serviceaccount:default:default');

  // Deleting the pod revokes the bound token (service account lookup checks the pod still exists).
  const del = await call(api.admin, 'DELETE', `${api.url}/api/v1/namespaces/default/pods/sa-pod`);
  t.true(del.status === 200 || del.status === 202, del.text);
  await eventually('pod gone', async () => ((await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/default/pods/sa-pod`)).status === 404 ? true : undefined), 60_000, 300);
  const after = await tokenReview(token);
  t.falsy(after.authenticated, JSON.stringify(after));
  const denied = await call(bare, 'POST', `${api.url}/apis/authentication.svc.io/v1/selfsubjectreviews`, { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' }, { authorization: `Bearer ${token}` });
  t.is(denied.status, 401);
  await eventually('pod directory removed', () => {
    try {
      statSync(path.join(e().rootDir, 'pods', uid));
      return undefined;
    } catch {
      return true;
    }
  }, 60_000, 300);
});

test.serial('a node may ask for tokens only bound to a pod on it (Node authorizer + NodeRestriction)', async (t) => {
  const { api, nodeTls, otherTls } = e();
  await createPod('sa-guard');
  const pod = await running('sa-guard');
  const url = `${api.url}/api/v1/namespaces/default/serviceaccounts/default/token`;
  const tr = (ref?: Record<string, unknown>) => ({ apiVersion: 'authentication.svc.io/v1', kind: 'TokenRequest', spec: { audiences: [], expirationSeconds: 600, ...(ref ? { boundObjectRef: ref } : {}) } });
  const ok = await call(nodeTls, 'POST', url, tr({ apiVersion: 'v1', kind: 'Pod', name: 'sa-guard', uid: pod.metadata.uid }));
  t.is(ok.status, 201, ok.text);
  t.truthy(ok.body.status.token);

  const unbound = await call(nodeTls, 'POST', url, tr());
  t.is(unbound.status, 403, unbound.text);
  t.regex(unbound.body.message, /node requested token not bound to a pod/);
  t.regex(unbound.body.message, /NodeRestriction/);

  const stale = await call(nodeTls, 'POST', url, tr({ apiVersion: 'v1', kind: 'Pod', name: 'sa-guard', uid: 'not-the-uid' }));
  t.is(stale.status, 403, stale.text);

  // Another node has no pod using this account: the Node authorizer says no before admission.
  const other = await call(otherTls, 'POST', url, tr({ apiVersion: 'v1', kind: 'Pod', name: 'sa-guard', uid: pod.metadata.uid }));
  t.is(other.status, 403, other.text);

  await call(api.admin, 'DELETE', `${api.url}/api/v1/namespaces/default/pods/sa-guard`);
});

test.serial('automountServiceAccountToken false: no volume; a downwardAPI volume gets the pod\'s fields and resources', async (t) => {
  await createPod(
    'dapi-pod',
    {
      automountServiceAccountToken: false,
      volumes: [
        {
          name: 'info',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
              { path: 'mem', resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' }, mode: 0o600 },
            ],
          },
        },
      ],
    },
    { resources: { limits: { memory: '96Mi' } }, volumeMounts: [{ name: 'info', mountPath: '/etc/podinfo' }] },
  );
  const pod = await running('dapi-pod');
  t.deepEqual(pod.spec.volumes!.map((v) => v.name), ['info']);
  const dir = path.join(e().rootDir, 'pods', pod.metadata.uid, 'volumes', 'svc.io~downward-api', 'info');
  const read = (f: string) => readFileSync(path.join(dir, f), 'utf8');
  t.is(read('labels'), 'app="dapi-pod"\ntier="web"');
  t.is(read('name'), 'dapi-pod');
  t.is(read('mem'), '96');
  t.is(statSync(path.join(dir, 'mem')).mode & 0o777, 0o600);
  t.is(statSync(path.join(dir, 'name')).mode & 0o777, 0o644);
  const { api } = e();
  await call(api.admin, 'DELETE', `${api.url}/api/v1/namespaces/default/pods/dapi-pod`);
});

test.serial('persistentVolumeClaim: an unbound claim keeps the pod waiting with the reason; once bound, the node (by its own identity) resolves the PV', async (t) => {
  const { api, dir } = e();
  const hostDir = path.join(dir, 'pv-data');
  const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  let r = await call(api.admin, 'POST', `${api.url}/api/v1/namespaces/default/persistentvolumeclaims`, claim);
  t.is(r.status, 201, r.text);
  await createPod('pvc-pod', { automountServiceAccountToken: false, volumes: [{ name: 'store', persistentVolumeClaim: { claimName: 'data' } }] }, { volumeMounts: [{ name: 'store', mountPath: '/data' }] });
  const waiting = await eventually('pod waiting on its claim', async () => {
    const p = await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/default/pods/pvc-pod`);
    const w = p.body?.status?.containerStatuses?.[0]?.state?.waiting;
    return w && /PVC is not bound/.test(w.message ?? '') ? w : undefined;
  }, 60_000, 300);
  t.is(waiting.reason, 'ContainerCreating');
  t.regex(waiting.message, /unbound immediate PersistentVolumeClaims/);

  // Bind by hand (no volume binder runs here): the PV names the claim, the claim the PV.
  const uid = (await call(api.admin, 'GET', `${api.url}/api/v1/namespaces/default/persistentvolumeclaims/data`)).body.metadata.uid;
  r = await call(api.admin, 'POST', `${api.url}/api/v1/persistentvolumes`, {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-e2e' },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: hostDir, type: 'DirectoryOrCreate' }, claimRef: { namespace: 'default', name: 'data', uid } },
  });
  t.is(r.status, 201, r.text);
  r = await call(api.admin, 'PATCH', `${api.url}/api/v1/namespaces/default/persistentvolumeclaims/data`, { spec: { volumeName: 'pv-e2e' } }, { 'content-type': 'application/merge-patch+json' });
  t.is(r.status, 200, r.text);
  r = await call(api.admin, 'PATCH', `${api.url}/api/v1/namespaces/default/persistentvolumeclaims/data/status`, { status: { phase: 'Bound' } }, { 'content-type': 'application/merge-patch+json' });
  t.is(r.status, 200, r.text);
  await running('pvc-pod');
  t.true(statSync(hostDir).isDirectory(), 'the node made the DirectoryOrCreate path');
  await call(api.admin, 'DELETE', `${api.url}/api/v1/namespaces/default/pods/pvc-pod`);
});
