/**
 * --runtime-config, feature gates and deprecation signals against real svc-apiservers (issue 23,
 * item 6): alpha versions are off by default and on when asked; a group version turned off is
 * gone from discovery and answers 404 while the rest is served; a deprecated version's request
 * shows kubectl's Warning and sets apiserver_requested_deprecated_apis; bad flags stop the server
 * naming the flag.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { request } from 'undici';
import { repoRoot, startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { kubectl } from '../../helpers/real-clients';

let plain: RunningApiServer;
let custom: RunningApiServer;
test.before(async () => {
  [plain, custom] = await Promise.all([startApiServer(), startApiServer({ args: ['--runtime-config=batch/v1=false,authentication.k8s.io/v1alpha1=true'] })]);
});
test.after.always(async () => {
  await Promise.all([plain?.stop(), custom?.stop()]);
});

test('alpha versions are off by default, on with --runtime-config; a version turned off is gone', async (t) => {
  const versions = async (s: RunningApiServer) => (await kubectl(s.kubeconfig, ['api-versions'], { timeoutMs: 30_000 })).stdout;
  t.notRegex(await versions(plain), /authentication\.k8s\.io\/v1alpha1/);
  t.regex(await versions(plain), /^batch\/v1$/m);
  t.regex(await versions(custom), /authentication\.k8s\.io\/v1alpha1/);
  t.notRegex(await versions(custom), /^batch\/v1$/m);
  const jobs = await kubectl(custom.kubeconfig, ['get', 'jobs'], { timeoutMs: 30_000 });
  t.not(jobs.code, 0);
  t.regex(jobs.stderr, /the server doesn't have a resource type "jobs"/);
  const direct = await request(`${custom.url}/apis/batch/v1/namespaces/default/jobs`, { dispatcher: custom.admin });
  t.is(direct.statusCode, 404);
  await direct.body.dump();
  t.is((await kubectl(custom.kubeconfig, ['get', 'cronjobs.v1.batch'], { timeoutMs: 30_000 })).code, 1);
  t.is((await kubectl(custom.kubeconfig, ['get', 'deployments'], { timeoutMs: 30_000 })).code, 0);
});

test('a deprecated version: kubectl shows the Warning, the metric records it', async (t) => {
  const sar = JSON.stringify({ apiVersion: 'authorization.k8s.io/v1beta1', kind: 'SubjectAccessReview', spec: { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } } });
  const r = await kubectl(plain.kubeconfig, ['create', '-f', '-', '-o', 'json'], { timeoutMs: 30_000, input: sar });
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /Warning: authorization\.k8s\.io\/v1beta1 SubjectAccessReview is deprecated in v1\.19\+, unavailable in v1\.22\+; use authorization\.k8s\.io\/v1 SubjectAccessReview/);
  const metrics = await request(`${plain.url}/metrics`, { dispatcher: plain.admin });
  const text = await metrics.body.text();
  t.regex(text, /apiserver_requested_deprecated_apis\{group="authorization\.k8s\.io",version="v1beta1",resource="subjectaccessreviews",subresource="",removed_release="1\.22"\} 1/);
  // Metric stability levels in HELP, as upstream's component-base renders them.
  t.regex(text, /# HELP apiserver_requested_deprecated_apis \[STABLE\] /);
  t.regex(text, /# HELP apiserver_request_total \[STABLE\] /);
});

test('an unknown group version in --runtime-config or a locked gate stops the server naming the flag', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-runtime-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const exit = async (...args: string[]) => {
    const p = spawn(join(repoRoot, 'bin', 'svc-apiserver'), ['--bind-address=127.0.0.1', '--secure-port=1', `--data-dir=${dir}`, ...args]);
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number | null>((r) => p.once('exit', r));
    return { code, err };
  };
  const unknown = await exit('--runtime-config=batch/v9=true');
  t.is(unknown.code, 2);
  t.regex(unknown.err, /--runtime-config: unknown api groups or versions: batch\/v9/);
  const locked = await exit('--feature-gates=StructuredAuthorizationConfiguration=false');
  t.is(locked.code, 2);
  t.regex(locked.err, /cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true/);
  const hidden = await exit('--show-hidden-metrics-for-version=1.30');
  t.is(hidden.code, 2);
  t.regex(hidden.err, /--show-hidden-metrics-for-version must be omitted or have the value '1\.32'\. Only the previous minor version is allowed/);
});
