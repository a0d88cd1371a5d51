import test from 'ava';
import { evaluate, verdictDetail } from '../../../../../apiserver/admission/pod-security/evaluator';
import { LATEST, parseVersion, type Level, type Version } from '../../../../../apiserver/admission/pod-security/levels';

type Obj = Record<string, unknown>;
const v = (text: string) => parseVersion(text) as Version;
const check = (level: Level, spec: Obj, annotations: Record<string, string> = {}, version: Version = LATEST) => verdictDetail(evaluate({ level, version }, { annotations, spec }));

/** A pod that meets restricted (the documented minimum). */
const restrictedPod = (): Obj => ({
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
  containers: [{ name: 'c', image: 'busybox', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
});

test('a plain pod passes baseline and fails restricted with upstream\'s four reasons, in upstream\'s order and words', (t) => {
  const plain = { containers: [{ name: 'c', image: 'busybox' }] };
  t.is(check('baseline', plain), '');
  t.is(
    check('restricted', plain),
    'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
      'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
      'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
      'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  );
  t.is(check('restricted', restrictedPod()), '');
  t.is(check('privileged', { hostNetwork: true }), '');
});

test('each baseline check names what offends', (t) => {
  const cases: Array<[Obj, string, Record<string, string>?]> = [
    [{ hostNetwork: true, hostPID: true, containers: [] }, 'host namespaces (hostNetwork=true, hostPID=true)'],
    [{ containers: [{ name: 'a', securityContext: { privileged: true } }, { name: 'b', securityContext: { privileged: true } }] }, 'privileged (containers "a", "b" must not set securityContext.privileged=true)'],
    [{ containers: [{ name: 'a', securityContext: { capabilities: { add: ['SYS_ADMIN', 'NET_ADMIN', 'CHOWN'] } } }] }, 'non-default capabilities (container "a" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add)'],
    [{ volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'e', emptyDir: {} }], containers: [] }, 'hostPath volumes (volume "h")'],
    [{ containers: [{ name: 'a', ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81, hostPort: 8081 }] }] }, 'hostPort (container "a" uses hostPorts 8080, 8081)'],
    [{ containers: [{ name: 'a', securityContext: { procMount: 'Unmasked' } }] }, 'procMount (container "a" must not set securityContext.procMount to "Unmasked")'],
    [{ securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [] }, 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
    [{ securityContext: { seLinuxOptions: { type: 'spc_t', user: 'u' } }, containers: [] }, 'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)'],
    [{ securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }, { name: 'net.ipv4.tcp_syncookies', value: '1' }] }, containers: [] }, 'forbidden sysctls (kernel.msgmax)'],
    [{ containers: [{ name: 'a', securityContext: { windowsOptions: { hostProcess: true } } }] }, 'hostProcess (container "a" must not set securityContext.windowsOptions.hostProcess=true)'],
    [{ containers: [{ name: 'a', securityContext: { appArmorProfile: { type: 'Unconfined' } } }] }, 'forbidden AppArmor profile (container "a" must not set AppArmor profile type to "Unconfined")'],
    [{ containers: [{ name: 'a', livenessProbe: { httpGet: { host: '10.0.0.1', port: 80 } } }] }, 'probe or lifecycle host (container "a" uses probe or lifecycle host "10.0.0.1")'],
  ];
  for (const [spec, want] of cases) t.is(check('baseline', spec), want, want);
  t.is(
    check('baseline', { containers: [{ name: 'a' }] }, { 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined' }),
    'forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/a="unconfined"")',
  );
});

test('restricted replaces the baseline checks it overrides: hostPath is reported as a restricted volume type, once', (t) => {
  const spec = { ...restrictedPod(), volumes: [{ name: 'h', hostPath: { path: '/' } }, { name: 'n', nfs: { server: 's', path: '/' } }, { name: 'c', configMap: { name: 'x' } }] };
  t.is(check('restricted', spec), 'restricted volume types (volumes "h", "n" use restricted volume types "hostPath", "nfs")');
});

test('versions select each check\'s implementation: older policies miss newer checks and allowances', (t) => {
  const engine = { securityContext: { seLinuxOptions: { type: 'container_engine_t' } }, containers: [] };
  t.is(check('baseline', engine, {}, v('v1.30')), 'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "container_engine_t")');
  t.is(check('baseline', engine, {}, v('v1.31')), '');
  // The restricted capabilities check begins at 1.22: before, only the baseline one runs.
  const noDrop = { ...restrictedPod(), containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false } }] };
  t.is(check('restricted', noDrop, {}, v('v1.21')), '');
  t.regex(check('restricted', noDrop, {}, v('v1.22')), /^unrestricted capabilities/);
  // Probe hosts are checked from 1.34; a version newer than every check reads as the newest.
  const probe = { containers: [{ name: 'a', readinessProbe: { tcpSocket: { host: 'h', port: 1 } } }] };
  t.is(check('baseline', probe, {}, v('v1.33')), '');
  t.not(check('baseline', probe, {}, v('v1.99')), '');
});

test('Windows pods are exempt from the Linux-only restricted checks; user-namespaced pods from runAsNonRoot (1.35)', (t) => {
  const win = { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [{ name: 'c' }] };
  t.is(check('restricted', win), '');
  const userns = { hostUsers: false, securityContext: { seccompProfile: { type: 'RuntimeDefault' } }, containers: [{ name: 'c', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }] };
  t.is(check('restricted', userns), '');
  t.is(check('restricted', userns, {}, v('v1.34')), 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)');
});

test('init and ephemeral containers are checked too, init first', (t) => {
  const spec = { initContainers: [{ name: 'i', securityContext: { privileged: true } }], containers: [{ name: 'c' }], ephemeralContainers: [{ name: 'e', securityContext: { privileged: true } }] };
  t.is(check('baseline', spec), 'privileged (containers "i", "e" must not set securityContext.privileged=true)');
});
