/**
 * The webhook dispatcher against an in-process HTTPS server with a test CA (real TLS): matching,
 * JSON patches, IfNeeded reinvocation, failurePolicy on timeouts (an injected timer fires when
 * the server has the request: no real waiting) and on TLS errors, sideEffects under dry run,
 * matchConditions, service clientConfig resolved to the Service's endpoint (and a missing
 * Service's error), parallel validating hooks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import test from 'ava';
import { AdmissionChain, type AdmissionAttributes } from '../../../../apiserver/admission/admission';
import { MutatingAdmissionPolicyPlugin } from '../../../../apiserver/admission/mutating-policy-plugin';
import { MutatingWebhookPlugin, ValidatingWebhookPlugin, type WebhookDispatchDeps } from '../../../../apiserver/admission/webhook-dispatch';
import { ApiError } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { createCA, issue } from '../../../../apiserver/pki/certs';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';

type Rec = Record<string, any>;
const configMaps = makeBuiltinTypes().find((t) => t.resource === 'configmaps')!;

let server: Server;
let base = '';
let caBundle = '';
let otherCa = '';
const seen: Array<{ path: string; review: Rec; host?: string; servername?: string }> = [];
const pending: Array<() => void> = [];
let onRequest: () => void = () => {};

function reply(res: ServerResponse, review: Rec, response: Rec): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, ...response } }));
}

function addLabel(key: string): string {
  return Buffer.from(JSON.stringify([{ op: 'add', path: `/metadata/labels/${key}`, value: 'y' }])).toString('base64');
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString()) as Rec;
    const path = new URL(req.url!, 'https://x').pathname;
    seen.push({ path, review, host: req.headers.host, servername: (req.socket as TLSSocket).servername || undefined });
    const labels = (review.request.object?.metadata?.labels ?? {}) as Rec;
    if (path === '/a') reply(res, review, labels.a ? { allowed: true } : { allowed: true, patchType: 'JSONPatch', patch: addLabel('a') });
    else if (path === '/b') reply(res, review, labels.b ? { allowed: true } : { allowed: true, patchType: 'JSONPatch', patch: addLabel('b') });
    else if (path === '/sidecar') reply(res, review, { allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify([{ op: 'add', path: '/spec/containers/-', value: { name: 'side', image: 'busybox' } }])).toString('base64') });
    else if (path === '/deny') reply(res, review, { allowed: false, status: { message: 'no', code: 403 } });
    else if (path === '/hang') pending.push(() => res.destroy());
    else reply(res, review, { allowed: true, warnings: ['seen'] });
    onRequest();
  });
}

test.before(async () => {
  const ca = await createCA('hooks CA');
  const other = await createCA('other CA');
  const cert = await issue(ca, { commonName: 'hooks', ips: ['127.0.0.1'], dnsNames: ['policy.hooks.svc'], usage: 'server', validityMs: 3_600_000 });
  caBundle = Buffer.from(ca.certPem).toString('base64');
  otherCa = Buffer.from(other.certPem).toString('base64');
  server = createServer({ cert: cert.certPem, key: cert.keyPem }, handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after.always(() => {
  for (const p of pending) p();
  server?.close();
});

function hook(name: string, path: string, extra: Rec = {}): Rec {
  return {
    name,
    clientConfig: { url: base + path, caBundle },
    rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: '*' }],
    failurePolicy: 'Fail',
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 10,
    namespaceSelector: {},
    objectSelector: {},
    ...extra,
  };
}

function deps(configs: KObject[], timers?: Array<() => void>): WebhookDispatchDeps {
  return {
    configurations: () => configs,
    namespaceLabels: () => Promise.resolve({}),
    client: {
      // Services: hooks/policy (port 443 → the test server's port, its endpoint 127.0.0.1); no other.
      services: (ref) => Promise.resolve(
        ref.namespace === 'hooks' && ref.name === 'policy' && ref.port === 443
          ? { host: '127.0.0.1', port: Number(new URL(base).port), servername: 'policy.hooks.svc' }
          : { reason: 'ServiceNotFound', message: '', detail: `service "${ref.name}" not found` },
      ),
      // The fake timer fires once the server holds the request (onRequest), so a timeout needs no real wait.
      setTimer: timers ? (_ms, fn) => (timers.push(fn), () => {}) : undefined,
    },
  };
}

const attrs = (o: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  type: configMaps,
  namespace: 'ns',
  name: 'cm',
  subresource: '',
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', labels: {} } },
  user: { username: 'u', groups: [] },
  dryRun: false,
  warnings: [],
  ...o,
});

const config = (name: string, webhooks: Rec[]): KObject => ({ metadata: { name }, webhooks });

test.serial('mutating hooks patch the object in order; an IfNeeded hook is called again once a later hook changed it', async (t) => {
  seen.length = 0;
  const plugin = new MutatingWebhookPlugin(deps([config('z', [hook('b.hooks.test', '/b')]), config('a', [hook('a.hooks.test', '/a', { reinvocationPolicy: 'IfNeeded' })])]));
  const a = attrs();
  const obj = a.object!;
  // Reinvocation is the chain's second pass (admission/reinvocation.ts), as upstream's reinvoker.
  await new AdmissionChain([plugin]).admit(a);
  t.is(a.object, obj, 'patched in place: the store keeps its reference');
  t.deepEqual(a.object!.metadata.labels, { a: 'y', b: 'y' });
  // Configurations by name: a first, then b, then a again (b changed the object after a saw it).
  t.deepEqual(seen.map((s) => s.path), ['/a', '/b', '/a']);
  t.is(seen[0].review.request.uid, seen[1].review.request.uid);
});

test.serial('a hook that times out: Fail is an internal error naming it, Ignore lets the request through', async (t) => {
  const timers: Array<() => void> = [];
  onRequest = () => timers.shift()?.();
  try {
    const fail = new ValidatingWebhookPlugin(deps([config('c', [hook('hang.hooks.test', '/hang', { timeoutSeconds: 3 })])], timers));
    const err = await t.throwsAsync(fail.validate(attrs()), { instanceOf: ApiError });
    t.is(err.message, `Internal error occurred: failed calling webhook "hang.hooks.test": failed to call webhook: Post "${base}/hang?timeout=3s": context deadline exceeded`);
    t.is(err.code, 500);
    const ignore = new ValidatingWebhookPlugin(deps([config('c', [hook('hang.hooks.test', '/hang', { failurePolicy: 'Ignore' })])], timers));
    const a = attrs();
    await t.notThrowsAsync(ignore.validate(a));
    t.deepEqual(a.auditAnnotations, { 'failed-open.validating.webhook.admission.k8s.io/round_0_index_0': 'hang.hooks.test' });
  } finally {
    onRequest = () => {};
  }
});

test.serial('the serving certificate is verified with caBundle', async (t) => {
  const plugin = new ValidatingWebhookPlugin(deps([config('c', [hook('tls.hooks.test', '/ok', { clientConfig: { url: `${base}/ok`, caBundle: otherCa } })])]));
  const err = await t.throwsAsync(plugin.validate(attrs()), { instanceOf: ApiError });
  t.regex(err.message, /failed calling webhook "tls.hooks.test": failed to call webhook: Post ".*": .*(certificate|self.signed|issuer)/i);
});

test.serial('a dry run is refused by a hook with side effects (Some, Unknown), never sent', async (t) => {
  seen.length = 0;
  const plugin = new ValidatingWebhookPlugin(deps([config('c', [hook('some.hooks.test', '/ok', { sideEffects: 'Some' })])]));
  const err = await t.throwsAsync(plugin.validate(attrs({ dryRun: true })), { instanceOf: ApiError });
  t.is(err.message, 'admission webhook "some.hooks.test" does not support dry run');
  t.is(err.code, 400);
  t.is(seen.length, 0);
  await t.notThrowsAsync(plugin.validate(attrs()));
  t.is(seen.length, 1);
});

test.serial('matchConditions: false skips the hook; an error follows failurePolicy', async (t) => {
  seen.length = 0;
  const skip = new ValidatingWebhookPlugin(deps([config('c', [hook('deny.hooks.test', '/deny', { matchConditions: [{ name: 'only-x', expression: "object.metadata.name == 'x'" }] })])]));
  await t.notThrowsAsync(skip.validate(attrs()));
  t.is(seen.length, 0);
  const x = attrs({ name: 'x', object: { metadata: { name: 'x', labels: {} } } });
  await t.throwsAsync(skip.validate(x), { message: 'admission webhook "deny.hooks.test" denied the request: no' });
  const broken = (failurePolicy: string) => new ValidatingWebhookPlugin(deps([config('c', [hook('deny.hooks.test', '/deny', { failurePolicy, matchConditions: [{ name: 'bad', expression: 'object.spec.nothing == 1' }] })])]));
  await t.throwsAsync(broken('Fail').validate(attrs()), { message: /failed calling webhook "deny.hooks.test": failed to evaluate match condition "bad"/ });
  await t.notThrowsAsync(broken('Ignore').validate(attrs()));
});

test.serial("a service clientConfig is called at the Service's endpoint, TLS verified for <svc>.<ns>.svc; a missing Service is an error in upstream's words", async (t) => {
  seen.length = 0;
  const svc = (name: string) => ({ clientConfig: { service: { namespace: 'hooks', name, port: 443, path: '/deny' }, caBundle } });
  const plugin = new ValidatingWebhookPlugin(deps([config('c', [hook('svc.hooks.test', '', svc('policy'))])]));
  await t.throwsAsync(plugin.validate(attrs()), { message: 'admission webhook "svc.hooks.test" denied the request: no' });
  t.like(seen[0], { path: '/deny', host: 'policy.hooks.svc:443', servername: 'policy.hooks.svc' });
  const missing = new ValidatingWebhookPlugin(deps([config('c', [hook('svc.hooks.test', '', svc('gone'))])]));
  await t.throwsAsync(missing.validate(attrs()), { message: 'Internal error occurred: failed calling webhook "svc.hooks.test": failed to call webhook: Post "https://gone.hooks.svc:443/deny?timeout=10s": service "gone" not found' });
  t.is(seen.length, 1);
});

test.serial('validating hooks are all called; the first refusal in configuration order answers; warnings reach the request', async (t) => {
  seen.length = 0;
  const plugin = new ValidatingWebhookPlugin(deps([config('b', [hook('deny.hooks.test', '/deny')]), config('a', [hook('ok.hooks.test', '/ok')])]));
  const a = attrs();
  await t.throwsAsync(plugin.validate(a), { message: 'admission webhook "deny.hooks.test" denied the request: no' });
  t.deepEqual(seen.map((s) => s.path).sort(), ['/deny', '/ok']);
  t.deepEqual(a.warnings, ['seen']);
  // admissionregistration objects are never sent to hooks.
  seen.length = 0;
  const own = makeBuiltinTypes().find((ty) => ty.resource === 'validatingwebhookconfigurations')!;
  await t.notThrowsAsync(plugin.validate(attrs({ type: own, namespace: '' })));
  t.is(seen.length, 0);
});

test.serial('a hook sees a two-name group as its rule names it ("*": upstream\'s k8s.io name); its patch comes back canonical', async (t) => {
  const roles = makeBuiltinTypes().find((r) => r.resource === 'roles')!;
  t.is(roles.group, 'rbac.authorization.svc.io');
  const rule = (apiGroups: string[]) => ({ rules: [{ operations: ['*'], apiGroups, apiVersions: ['v1'], resources: ['roles'], scope: '*' }] });
  const role = (): KObject => ({
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'Role',
    metadata: { name: 'r', namespace: 'ns', labels: {}, managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'rbac.authorization.svc.io/v1' }] },
  });
  for (const [groups, expected] of [
    [['*'], 'rbac.authorization.k8s.io'],
    [['rbac.authorization.k8s.io'], 'rbac.authorization.k8s.io'],
    [['rbac.authorization.svc.io'], 'rbac.authorization.svc.io'],
  ] as const) {
    seen.length = 0;
    const plugin = new MutatingWebhookPlugin(deps([config('x', [hook('a.hooks.test', '/a', rule([...groups]))])]));
    const a = attrs({ type: roles, name: 'r', object: role() });
    await plugin.mutate(a);
    const request = seen[0].review.request as Rec;
    t.deepEqual([request.kind.group, request.resource.group, request.requestKind.group, request.requestResource.group], [expected, expected, expected, expected], groups.join());
    t.is(request.object.apiVersion, `${expected}/v1`);
    t.is(request.object.metadata.managedFields[0].apiVersion, `${expected}/v1`);
    // Patched (label a added) and stored in the canonical spelling.
    t.deepEqual(a.object!.metadata.labels, { a: 'y' });
    t.is(a.object!.apiVersion, 'rbac.authorization.svc.io/v1');
    t.is((a.object!.metadata.managedFields as Rec[])[0].apiVersion, 'rbac.authorization.svc.io/v1');
  }
});

test.serial("a hook's patch is defaulted, as upstream decodes it: a container it adds gets a container's defaults", async (t) => {
  const pods = makeBuiltinTypes().find((r) => r.resource === 'pods' && r.group === '')!;
  const plugin = new MutatingWebhookPlugin(deps([config('s', [hook('side.hooks.test', '/sidecar', { rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }] })])]));
  const pod: KObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [{ name: 'app', image: 'busybox', terminationMessagePath: '/dev/termination-log' }] } };
  const a = attrs({ type: pods, name: 'p', object: pod });
  await plugin.mutate(a);
  const side = ((a.object!.spec as Rec).containers as Rec[]).find((c) => c.name === 'side')!;
  t.is(side.terminationMessagePath, '/dev/termination-log');
  t.is(side.imagePullPolicy, 'Always');
});

/** A MutatingAdmissionPolicy on config maps copying label `from` into `to` ("none" when absent). */
function copyPolicy(reinvocationPolicy: string, from: string, to: string): MutatingAdmissionPolicyPlugin {
  const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: '*' }];
  const expression = `Object{metadata: Object.metadata{labels: {"${to}": "${from}" in object.metadata.labels ? object.metadata.labels["${from}"] : "none"}}}`;
  const policy: KObject = {
    metadata: { name: 'copy' },
    spec: { failurePolicy: 'Fail', reinvocationPolicy, matchConstraints: { resourceRules: rules, namespaceSelector: {}, objectSelector: {} }, mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression } }] },
  };
  return new MutatingAdmissionPolicyPlugin(
    {
      policies: () => Promise.resolve([policy]),
      bindings: () => Promise.resolve([{ metadata: { name: 'copy' }, spec: { policyName: 'copy' } }]),
      namespace: (name) => Promise.resolve({ metadata: { name } }),
      paramType: () => undefined,
      getParam: () => Promise.resolve(undefined),
      listParams: () => Promise.resolve([]),
    },
    true,
  );
}

test.serial('reinvocation spans policies and webhooks (upstream\'s reinvoker): a policy runs again after a hook changed the object, and a hook after the policy did', async (t) => {
  // Pass 1: the policy copies label a into c ("none"), then hook /a adds label a. Pass 2: the
  // policy (IfNeeded) sees a and sets c; the hook (IfNeeded) is called again as c changed after it.
  seen.length = 0;
  const hooks = new MutatingWebhookPlugin(deps([config('a', [hook('a.hooks.test', '/a', { reinvocationPolicy: 'IfNeeded' })])]));
  const a = attrs();
  await new AdmissionChain([copyPolicy('IfNeeded', 'a', 'c'), hooks]).admit(a);
  t.deepEqual(a.object!.metadata.labels, { a: 'y', c: 'y' });
  t.deepEqual(seen.map((s) => s.path), ['/a', '/a']);
  t.is(seen[1].review.request.object.metadata.labels.c, 'y');

  // Never: neither is called again; the hook without IfNeeded is not either.
  seen.length = 0;
  const never = attrs();
  await new AdmissionChain([copyPolicy('Never', 'a', 'c'), new MutatingWebhookPlugin(deps([config('a', [hook('a.hooks.test', '/a')])]))]).admit(never);
  t.deepEqual(never.object!.metadata.labels, { a: 'y', c: 'none' });
  t.deepEqual(seen.map((s) => s.path), ['/a']);
});
