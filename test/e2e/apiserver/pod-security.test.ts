/**
 * Pod Security admission with kubectl against a real svc-apiserver (issue 23, item 3): a namespace
 * labelled enforce=restricted refuses a plain pod with upstream's message; warn=baseline lets a
 * hostNetwork pod in with kubectl printing upstream's warning; tightening a namespace's label
 * warns about the pods already there; an admission configuration file sets cluster defaults and
 * exemptions, and a bad one stops the server naming the file and the field.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { repoRoot, startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl } from '../../helpers/real-clients';

const dir = mkdtempSync(join(tmpdir(), 'svc-pod-security-'));
let s: RunningApiServer;
test.before(async () => {
  const config = join(dir, 'admission.yaml');
  writeFileSync(
    config,
    [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: PodSecurity',
      '  configuration:',
      '    apiVersion: pod-security.admission.config.k8s.io/v1',
      '    kind: PodSecurityConfiguration',
      '    defaults: {enforce: baseline}',
      '    exemptions: {namespaces: [infra]}',
      '',
    ].join('\n'),
  );
  s = await startApiServer({ args: [`--admission-control-config-file=${config}`] });
});
test.after.always(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], input?: string) => kubectl(s.kubeconfig, args, { timeoutMs: 30_000, input });
async function k(...args: string[]): Promise<string> {
  const r = await run(args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout + r.stderr;
}
const pod = (name: string, ns: string, spec: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns }, spec: { containers: [{ name: 'app', image: 'busybox' }], ...spec } });

test.serial('enforce=restricted refuses a plain pod with upstream\'s message; a pod meeting restricted is created', async (t) => {
  await k('create', 'namespace', 'strict');
  await k('label', 'namespace', 'strict', 'pod-security.kubernetes.io/enforce=restricted');
  const r = await run(['run', 'plain', '--image=busybox', '-n', 'strict']);
  t.not(r.code, 0);
  t.regex(r.stderr, /pods "plain" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "plain" must set securityContext.allowPrivilegeEscalation=false\), unrestricted capabilities/);
  const good = pod('good', 'strict', {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [{ name: 'app', image: 'busybox', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
  });
  const created = await run(['create', '-f', '-'], good);
  t.is(created.code, 0, created.stderr);
});

test.serial('warn shows kubectl upstream\'s warning and lets the pod in; tightening enforce warns about existing pods', async (t) => {
  await k('create', 'namespace', 'relaxed');
  // The configured default is enforce=baseline: the namespace opts down to privileged and warns at baseline.
  await k('label', 'namespace', 'relaxed', 'pod-security.svc.io/enforce=privileged', 'pod-security.svc.io/warn=baseline');
  const r = await run(['create', '-f', '-'], pod('hostnet', 'relaxed', { hostNetwork: true }));
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /Warning: would violate PodSecurity "baseline:latest": host namespaces \(hostNetwork=true\)/);
  const relabel = await run(['label', '--overwrite', 'namespace', 'relaxed', 'pod-security.svc.io/enforce=baseline']);
  t.is(relabel.code, 0, relabel.stderr);
  t.regex(relabel.stderr, /Warning: existing pods in namespace "relaxed" violate the new PodSecurity enforce level "baseline:latest"/);
  t.regex(relabel.stderr, /Warning: hostnet: host namespaces/);
});

test.serial('the configuration file\'s defaults apply to unlabelled namespaces and its exempt namespaces pass anything', async (t) => {
  await k('create', 'namespace', 'plain');
  const refused = await run(['create', '-f', '-'], pod('priv', 'plain', { containers: [{ name: 'app', image: 'busybox', securityContext: { privileged: true } }] }));
  t.not(refused.code, 0);
  t.regex(refused.stderr, /violates PodSecurity "baseline:latest": privileged \(container "app" must not set securityContext.privileged=true\)/);
  await k('create', 'namespace', 'infra');
  const exempt = await run(['create', '-f', '-'], pod('priv', 'infra', { containers: [{ name: 'app', image: 'busybox', securityContext: { privileged: true } }] }));
  t.is(exempt.code, 0, exempt.stderr);
  const badLabel = await run(['label', 'namespace', 'plain', 'pod-security.kubernetes.io/enforce=strict']);
  t.not(badLabel.code, 0);
  t.regex(badLabel.stderr, /metadata.labels\[pod-security.kubernetes.io\/enforce\]: Invalid value: "strict": must be one of privileged, baseline, restricted/);
});

test('a bad admission configuration file stops the server with exit 2, naming the file and the field', async (t) => {
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults: {enforce: strict}\n');
  const data = mkdtempSync(join(tmpdir(), 'svc-pod-security-bad-'));
  t.teardown(() => rmSync(data, { recursive: true, force: true }));
  const proc = spawn(join(repoRoot, 'bin', 'svc-apiserver'), ['--bind-address=127.0.0.1', '--secure-port=1', `--data-dir=${data}`, `--admission-control-config-file=${bad}`]);
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => proc.once('exit', r));
  t.is(code, 2);
  t.true(err.includes(`${bad}: plugins[0].configuration: defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted`), err);
});
