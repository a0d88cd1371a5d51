/**
 * Issue 20 item 5 on real peers: a StatefulSet with volumeClaimTemplates on the test's own
 * containerd (test/helpers/containerd-node.ts). Its pod, running as a non-root user, writes a file
 * into its local-path volume; the pod is deleted, and its replacement (same name, same claim, a
 * new uid) reads the file back and records what it read. Deleting the StatefulSet and its claim
 * removes the volume and its directory.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { requireContainerdTools } from '../../helpers/containerd';
import { startContainerdNode, type ContainerdNode } from '../../helpers/containerd-node';
import { kubectl } from '../../helpers/real-clients';
import { eventually } from '../agent/agent-process';

const IMAGE = 'svc.local/busybox:latest';

interface Obj {
  metadata: { name: string; uid: string };
  spec: { volumeName?: string };
  status?: { phase?: string };
}

test('a StatefulSet pod writes to its local-path volume; its replacement reads the file', async (t) => {
  t.timeout(300_000);
  requireContainerdTools();
  const localPathDir = path.join(mkdtempSync(path.join(tmpdir(), 'svc-local-path-ctrd-')), 'volumes');
  const node: ContainerdNode = await startContainerdNode({ nodeName: 'e2e-local-path', configLines: [`localPathDir: ${localPathDir}`] });
  t.teardown(async () => {
    await kubectl(node.api.kubeconfig, ['delete', 'statefulset', 'web', '--ignore-not-found', '--wait=false']);
    await node.stop();
    rmSync(path.dirname(localPathDir), { recursive: true, force: true });
  });
  const k = async (args: string[], input?: string) => {
    const r = await kubectl(node.api.kubeconfig, args, { timeoutMs: 120_000, ...(input ? { input } : {}) });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}\n${node.agent.output().slice(-3000)}`);
    return r.stdout;
  };
  const getOrUndefined = async (...args: string[]): Promise<Obj | undefined> => {
    const r = await kubectl(node.api.kubeconfig, ['get', ...args, '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.stdout) as Obj) : undefined;
  };
  await eventually('default service account', async () => (await getOrUndefined('serviceaccount', 'default')) ?? undefined, 60_000);
  await k(
    ['apply', '-f', '-'],
    `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: e2e-local}
provisioner: svc.io/local-path
volumeBindingMode: WaitForFirstConsumer
parameters: {nodePath: "${localPathDir}"}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: web
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      securityContext: {runAsUser: 1000, runAsGroup: 1000}
      containers:
      - name: c
        image: "${IMAGE}"
        imagePullPolicy: Never
        command: [sh, -c, 'if [ -f /data/hello ]; then cat /data/hello > /data/read-by-replacement; else echo "written by $(hostname)" > /data/hello; fi; exec sleep 3600']
        volumeMounts: [{name: www, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: www}
    spec: {accessModes: [ReadWriteOnce], storageClassName: e2e-local, resources: {requests: {storage: 1Gi}}}
`,
  );
  const running = async (what: string, notUid?: string) =>
    eventually(what, async () => ((p) => (p?.status?.phase === 'Running' && p.metadata.uid !== notUid ? p : undefined))(await getOrUndefined('pod', 'web-0')), 150_000, 1000);
  const first = await running('web-0 running');
  const claim = (await getOrUndefined('pvc', 'www-web-0'))!;
  t.is(claim.status?.phase, 'Bound');
  const volumeDir = path.join(localPathDir, `${claim.spec.volumeName}_default_www-web-0`);
  t.is(statSync(volumeDir).mode & 0o777, 0o777);
  const hello = await eventually('hello written', () => (existsSync(path.join(volumeDir, 'hello')) ? readFileSync(path.join(volumeDir, 'hello'), 'utf8') : undefined), 60_000);
  t.is(hello, 'written by web-0\n');
  t.is(statSync(path.join(volumeDir, 'hello')).uid, 1000, 'written by the pod\'s non-root user');

  await k(['delete', 'pod', 'web-0', '--wait=false']);
  await running('replacement web-0 running', first.metadata.uid);
  const read = await eventually('replacement read the file', () => (existsSync(path.join(volumeDir, 'read-by-replacement')) ? readFileSync(path.join(volumeDir, 'read-by-replacement'), 'utf8') : undefined), 60_000);
  t.is(read, 'written by web-0\n');
  t.is((await getOrUndefined('pvc', 'www-web-0'))?.spec.volumeName, claim.spec.volumeName, 'the same claim and volume');

  await k(['delete', 'statefulset', 'web', '--wait=true', '--timeout=90s']);
  await eventually('web-0 gone', async () => ((await getOrUndefined('pod', 'web-0')) ? undefined : true), 90_000, 1000);
  await k(['delete', 'pvc', 'www-web-0', '--timeout=90s']);
  await eventually('volume gone', async () => ((await getOrUndefined('pv', claim.spec.volumeName!)) ? undefined : true), 90_000, 1000);
  t.false(existsSync(volumeDir));
});
