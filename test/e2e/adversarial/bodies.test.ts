import test from 'ava';
import { readFileSync } from 'node:fs';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';

// Issue 16, defects 3 and 7 (hostile request bodies) against a real svc-apiserver: YAML aliases
// are bounded by the size they expand to, nesting is bounded for every body format and patch type
// (a 400, never a 500 from a stack overflow), and a lone surrogate escape is stored as U+FFFD so
// every answer stays valid for strict JSON parsers. One request per case; bounded in count.

let s: RunningApiServer;
const ns = 'adv-bodies';
const cms = () => `${s.url}/api/v1/namespaces/${ns}/configmaps`;
const depthLimit = 512;

function peakMb(): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'));
  if (!m) throw new Error('no VmHWM');
  return Number(m[1]) / 1024;
}

/** {"a":{"a":...0}} with n objects. */
const nested = (n: number) => '{"a":'.repeat(n) + '0' + '}'.repeat(n);

test.before(async () => {
  s = await startApiServer();
  const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  if (r.status !== 201) throw new Error(`namespace: ${r.status} ${r.text}`);
  const cm = await call(s.admin, 'POST', cms(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' }, data: { a: 'b' } });
  if (cm.status !== 201) throw new Error(`configmap: ${cm.status} ${cm.text}`);
});

test.after.always(async () => {
  await s?.stop();
});

test.serial('a 3 MB YAML body with 99 aliases of a 2.9 MB scalar is refused with 400 before it is expanded', async (t) => {
  const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: bomb', 'data:', `  big: &big ${'x'.repeat(2_900_000)}`];
  for (let i = 0; i < 99; i++) lines.push(`  k${i}: *big`);
  const peakBefore = peakMb();
  const [bomb, other] = await Promise.all([
    call(s.admin, 'POST', cms(), lines.join('\n'), { 'content-type': 'application/yaml' }),
    call(s.admin, 'GET', `${cms()}/one`),
  ]);
  t.is(bomb.status, 400, bomb.text.slice(0, 300));
  t.regex(bomb.body.message, /yaml: the document is larger than the limit of 3145728 bytes once its aliases are expanded at line 6, column 3$/);
  t.is(other.status, 200);
  // Expanded, the aliases are 290 MB of JSON; measured on the parsed nodes, nothing of that size is built.
  const grew = peakMb() - peakBefore;
  t.true(grew < 150, `peak resident memory grew by ${grew.toFixed(0)} MiB`);
});

test.serial('nesting beyond 512 levels is a 400 in every body format and patch type, also far beyond (no stack overflow, no 500)', async (t) => {
  const deep = (n: number) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","annotations":{"a":"b"}},"x":${nested(n)}}`;
  const cases: Array<[string, string, string, string]> = [
    ['POST', cms(), deep(depthLimit), 'application/json'],
    ['POST', cms(), `a: ${'['.repeat(depthLimit)}${']'.repeat(depthLimit)}\n`, 'application/yaml'],
    ['PATCH', `${cms()}/one`, `{"metadata":{"labels":${nested(depthLimit)}}}`, 'application/merge-patch+json'],
    ['PATCH', `${cms()}/one`, `{"metadata":{"labels":${nested(9000)}}}`, 'application/merge-patch+json'],
    ['PATCH', `${cms()}/one`, `{"metadata":{"labels":${nested(9000)}}}`, 'application/strategic-merge-patch+json'],
    ['PATCH', `${cms()}/one`, `[{"op":"add","path":"/x","value":${nested(9000)}}]`, 'application/json-patch+json'],
    ['PATCH', `${cms()}/one`, `{"metadata":{"managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":${nested(9000)}}]}}`, 'application/merge-patch+json'],
    ['POST', cms(), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"mf","managedFields":[{"manager":"m","fieldsV1":${nested(9000)}}]}}`, 'application/json'],
    ['POST', cms(), `a: ${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}\n`, 'application/yaml'],
  ];
  for (const [method, url, body, ct] of cases) {
    const r = await call(s.admin, method, url, body, { 'content-type': ct });
    t.is(r.status, 400, `${method} ${ct} ${body.length} bytes: ${r.text.slice(0, 200)}`);
    t.regex(r.body.message, /exceeded max depth of 512 at line \d+, column \d+$/, `${method} ${ct}`);
  }
  t.is((await call(s.admin, 'GET', `${cms()}/one`)).status, 200);
});

test.serial('a body 500 levels deep is decoded, its unknown depth dropped with a warning, and the pod answered (the recursive walks stay within the stack)', async (t) => {
  // Every built-in field is typed, so depth past the schema is an unknown field: pruned (upstream's
  // default fieldValidation, Warn) after the body was decoded, checked for depth and walked.
  // Schemaless depth (CRDs with x-kubernetes-preserve-unknown-fields) is bounded by the same 512.
  let deep: unknown = 'x';
  for (let i = 0; i < 490; i++) deep = { a: deep };
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'deep' }, spec: { containers: [{ name: 'c', image: 'i', lifecycle: { preStop: { exec: { command: ['true'] } }, a: deep } }] } };
  const created = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/${ns}/pods`, pod);
  t.is(created.status, 201, created.text.slice(0, 300));
  t.regex(String(created.headers.warning), /unknown field \\"spec\.containers\[0\]\.lifecycle\.a\\"/);
  t.deepEqual(created.body.spec.containers[0].lifecycle, { preStop: { exec: { command: ['true'] } } });
  const url = `${s.url}/api/v1/namespaces/${ns}/pods/deep`;
  // A merge patch carrying the same depth: decoded and walked, the unknown part dropped again.
  const merged = await call(s.admin, 'PATCH', url, { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', lifecycle: { a: deep } }] } }, { 'content-type': 'application/strategic-merge-patch+json' });
  t.is(merged.status, 200, merged.text.slice(0, 300));
  t.is(merged.body.metadata.labels.a, 'b');
  t.is((await call(s.admin, 'GET', url)).status, 200);
});

test.serial('a lone surrogate escape is stored as U+FFFD, so lists stay valid for strict JSON parsers', async (t) => {
  const json = await call(s.admin, 'POST', cms(), '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"sur"},"data":{"a":"\\ud800","b":"x\\udbffy\\udc00"}}');
  t.is(json.status, 201, json.text);
  t.deepEqual(json.body.data, { a: '\uFFFD', b: 'x\uFFFDy\uFFFD' });
  const yaml = await call(s.admin, 'POST', cms(), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sur-yaml\ndata:\n  a: "\\ud800"\n', { 'content-type': 'application/yaml' });
  t.is(yaml.status, 201, yaml.text);
  t.deepEqual(yaml.body.data, { a: '\uFFFD' });
  const patched = await call(s.admin, 'PATCH', `${cms()}/one`, '{"data":{"p":"\\udfff"}}', { 'content-type': 'application/merge-patch+json' });
  t.is(patched.status, 200, patched.text);
  const list = await call(s.admin, 'GET', cms());
  t.is(list.status, 200);
  // A strict parser refuses an escaped surrogate that is not half of a pair.
  t.notRegex(list.text, /\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/i);
  t.true(list.text.includes('\uFFFD'));
});
