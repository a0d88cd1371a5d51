import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parsePodSecurityConfig } from '../../../../apiserver/admission/pod-security/config';
import { loadAdmissionConfig } from '../../../../apiserver/config/admission-config';

const dir = mkdtempSync(join(tmpdir(), 'svc-admission-config-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

test('plugin configuration inline or by a path relative to the file; PodSecurity defaults and exemptions read from it', (t) => {
  file('psa.yaml', 'apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\n  enforce-version: v1.30\nexemptions:\n  usernames: [ci]\n');
  const cfg = loadAdmissionConfig(file('a.yaml', 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: psa.yaml\n'));
  const psa = parsePodSecurityConfig(cfg.get('PodSecurity'));
  t.deepEqual(psa.defaults.enforce, { level: 'baseline', version: { latest: false, minor: 30 } });
  t.is(psa.defaults.warn.level, 'privileged');
  t.deepEqual(psa.exemptions, { usernames: ['ci'], namespaces: [], runtimeClasses: [] });
  t.is(loadAdmissionConfig(undefined).size, 0);
});

test('every problem names the file and the field', (t) => {
  const cases: Array<[string, RegExp]> = [
    ['kind: Nope\napiVersion: apiserver.config.k8s.io/v1\n', /b\.yaml: kind: Invalid value: "Nope": must be AdmissionConfiguration/],
    ['kind: AdmissionConfiguration\napiVersion: v9\n', /b\.yaml: apiVersion: Unsupported value: "v9"/],
    ['kind: AdmissionConfiguration\napiVersion: apiserver.config.k8s.io/v1\nplugins:\n- name: A\n- name: A\n', /b\.yaml: plugins\[1\]\.name: Duplicate value: "A"/],
    ['kind: AdmissionConfiguration\napiVersion: apiserver.config.k8s.io/v1\nplugins:\n- name: A\n  path: missing.yaml\n', /missing\.yaml: cannot read/],
    ['kind: AdmissionConfiguration\napiVersion: apiserver.config.k8s.io/v1\nextra: 1\n', /b\.yaml: extra: unknown field/],
  ];
  for (const [text, want] of cases) t.throws(() => loadAdmissionConfig(file('b.yaml', text)), { message: want });
  const psa = (body: string) => () =>
    parsePodSecurityConfig(loadAdmissionConfig(file('c.yaml', `kind: AdmissionConfiguration\napiVersion: apiserver.config.k8s.io/v1\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n${body}`)).get('PodSecurity'));
  t.throws(psa('    defaults: {warn-version: "1.2"}\n'), { message: /c\.yaml: plugins\[0\]\.configuration: defaults\.warn-version: Invalid value: "1\.2": must be "latest" or "v1\.x"/ });
  t.throws(psa('    exemptions: {users: [a]}\n'), { message: /exemptions\.users: unknown field/ });
  t.throws(psa('    exemptions: {namespaces: [a, a]}\n'), { message: /exemptions\.namespaces: Duplicate value: "a"/ });
});
