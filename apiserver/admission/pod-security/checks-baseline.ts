/**
 * The baseline checks of the Pod Security Standards, with upstream's reasons and details
 * (k8s.io/pod-security-admission/policy), each keyed by upstream's check ID and the first policy
 * version it applies to.
 */
import { rec } from '../../registry/obj-access';
import { ALLOWED, text, containerList, containers, forbid, joinQuote, pluralize, podSecurityContext, setters, sortedSet, inUserNamespace, type CheckFn, type PodView } from './check-helpers';

type Obj = Record<string, unknown>;

/** One check: its ID, its level and its implementations by the first version (v1.<minor>) each applies to. */
export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  versions: Array<{ minor: number; fn: CheckFn; overrides?: string[] }>;
}

const hostProcess: CheckFn = ({ spec }) => {
  const bad = containers(spec).filter((c) => rec(c.sc?.windowsOptions)?.hostProcess === true).map((c) => c.name);
  const pod = rec(podSecurityContext(spec)?.windowsOptions)?.hostProcess === true;
  const who = setters(pod, bad);
  return who.length ? forbid('hostProcess', `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`) : ALLOWED;
};

const hostNamespaces: CheckFn = ({ spec }) => {
  const used = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((k) => spec[k] === true).map((k) => `${k}=true`);
  return used.length ? forbid('host namespaces', used.join(', ')) : ALLOWED;
};

const privileged: CheckFn = ({ spec }) => {
  const bad = containers(spec).filter((c) => c.sc?.privileged === true).map((c) => c.name);
  return bad.length ? forbid('privileged', `${containerList(bad)} must not set securityContext.privileged=true`) : ALLOWED;
};

const BASELINE_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

const capabilitiesBaseline: CheckFn = ({ spec }) => {
  const bad: string[] = [];
  const caps: string[] = [];
  for (const c of containers(spec)) {
    const add = rec(c.sc?.capabilities)?.add;
    const extra = (Array.isArray(add) ? add.map(String) : []).filter((cap) => !BASELINE_CAPABILITIES.has(cap));
    if (extra.length) {
      bad.push(c.name);
      caps.push(...extra);
    }
  }
  return bad.length ? forbid('non-default capabilities', `${containerList(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`) : ALLOWED;
};

const hostPathVolumes: CheckFn = ({ spec }) => {
  const vols = (Array.isArray(spec.volumes) ? spec.volumes : []).map((v) => rec(v) ?? {}).filter((v) => v.hostPath !== undefined && v.hostPath !== null);
  const names = vols.map((v) => text(v.name));
  return names.length ? forbid('hostPath volumes', `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}`) : ALLOWED;
};

const hostPorts: CheckFn = ({ spec }) => {
  const bad: string[] = [];
  const ports: string[] = [];
  for (const c of containers(spec)) {
    const used = (Array.isArray(c.raw.ports) ? c.raw.ports : []).map((p) => Number(rec(p)?.hostPort ?? 0)).filter((p) => p !== 0);
    if (used.length) {
      bad.push(c.name);
      ports.push(...used.map(String));
    }
  }
  if (!bad.length) return ALLOWED;
  const distinct = sortedSet(ports);
  return forbid('hostPort', `${containerList(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', distinct.length)} ${distinct.join(', ')}`);
};

function hostsOf(handler: unknown): string[] {
  const h = rec(handler);
  if (!h) return [];
  return [rec(h.httpGet)?.host, rec(h.tcpSocket)?.host].filter((x): x is string => typeof x === 'string' && x !== '');
}

const hostProbes: CheckFn = ({ spec }) => {
  const bad = new Set<string>();
  const hosts = new Set<string>();
  for (const c of containers(spec)) {
    const lifecycle = rec(c.raw.lifecycle);
    const found = [c.raw.livenessProbe, c.raw.readinessProbe, c.raw.startupProbe, lifecycle?.postStart, lifecycle?.preStop].flatMap(hostsOf);
    if (found.length) {
      bad.add(c.name);
      for (const h of found) hosts.add(h);
    }
  }
  if (!bad.size) return ALLOWED;
  const names = sortedSet(bad);
  return forbid(
    'probe or lifecycle host',
    `${containerList(names)} ${pluralize('uses', 'use', names.length)} ${pluralize('probe or lifecycle host', 'probe or lifecycle hosts', hosts.size)} ${joinQuote(sortedSet(hosts))}`,
  );
};

const appArmor: CheckFn = ({ annotations, spec }) => {
  const okType = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';
  const values = new Set<string>();
  const podProfile = rec(podSecurityContext(spec)?.appArmorProfile);
  const pod = podProfile !== undefined && !okType(podProfile.type);
  if (pod) values.add(text(podProfile.type));
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const p = rec(c.sc?.appArmorProfile);
    if (p && !okType(p.type)) {
      bad.push(c.name);
      values.add(text(p.type));
    }
  }
  const who = setters(pod, bad);
  const prefix = 'container.apparmor.security.beta.kubernetes.io/';
  const badAnnotations = Object.entries(annotations)
    .filter(([k, v]) => k.startsWith(prefix) && !(v === '' || v === 'runtime/default' || v.startsWith('localhost/')))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .sort();
  const list = [...sortedSet(values), ...badAnnotations];
  if (badAnnotations.length) who.push(pluralize('annotation', 'annotations', badAnnotations.length));
  if (!who.length) return ALLOWED;
  return forbid(pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', list.length), `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(list)}`);
};

function seLinux(allowedTypes: ReadonlySet<string>): CheckFn {
  return ({ spec }) => {
    const types = new Set<string>();
    let user = false;
    let role = false;
    const valid = (o: Obj): boolean => {
      let ok = true;
      const t = text(o.type);
      if (!allowedTypes.has(t)) {
        ok = false;
        types.add(t);
      }
      if (o.user) user = true;
      if (o.role) role = true;
      return ok && !o.user && !o.role;
    };
    const podOpts = rec(podSecurityContext(spec)?.seLinuxOptions);
    const pod = podOpts !== undefined && !valid(podOpts);
    const bad = containers(spec)
      .filter((c) => {
        const o = rec(c.sc?.seLinuxOptions);
        return o !== undefined && !valid(o);
      })
      .map((c) => c.name);
    const who = setters(pod, bad);
    if (!who.length) return ALLOWED;
    const data: string[] = [];
    if (types.size) data.push(`${pluralize('type', 'types', types.size)} ${joinQuote(sortedSet(types))}`);
    if (user) data.push('user may not be set');
    if (role) data.push('role may not be set');
    return forbid('seLinuxOptions', `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`);
  };
}

const SELINUX_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_1_31 = new Set([...SELINUX_1_0, 'container_engine_t']);

/** procMount other than Default (shared by the baseline check and, from 1.35, the restricted one). */
export const procMount: CheckFn = ({ spec }) => {
  const bad: string[] = [];
  const kinds: string[] = [];
  for (const c of containers(spec)) {
    const pm = c.sc?.procMount;
    if (pm !== undefined && pm !== null && pm !== 'Default') {
      bad.push(c.name);
      kinds.push(text(pm));
    }
  }
  return bad.length ? forbid('procMount', `${containerList(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(kinds))}`) : ALLOWED;
};

const relaxedInUserNamespace = (fn: CheckFn): CheckFn => (pod) => (inUserNamespace(pod.spec) ? ALLOWED : fn(pod));

/** A seccomp profile type the baseline and restricted levels accept. */
export function validSeccompType(t: unknown): boolean {
  return t === 'RuntimeDefault' || t === 'Localhost';
}

const seccompAnnotations: CheckFn = ({ annotations, spec }) => {
  const ok = (v: string) => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const bad = new Set<string>();
  const podKey = 'seccomp.security.alpha.kubernetes.io/pod';
  if (podKey in annotations && !ok(annotations[podKey])) bad.add(`${podKey}=${JSON.stringify(annotations[podKey])}`);
  for (const c of containers(spec)) {
    const key = `container.seccomp.security.alpha.kubernetes.io/${c.name}`;
    if (key in annotations && !ok(annotations[key])) bad.add(`${key}=${JSON.stringify(annotations[key])}`);
  }
  return bad.size ? forbid('seccompProfile', `forbidden ${pluralize('annotation', 'annotations', bad.size)} ${sortedSet(bad).join(', ')}`) : ALLOWED;
};

const seccompBaseline: CheckFn = ({ spec }) => {
  const values = new Set<string>();
  const podProfile = rec(podSecurityContext(spec)?.seccompProfile);
  const pod = podProfile !== undefined && !validSeccompType(podProfile.type);
  if (pod) values.add(text(podProfile.type));
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const p = rec(c.sc?.seccompProfile);
    if (p && !validSeccompType(p.type)) {
      bad.push(c.name);
      values.add(text(p.type));
    }
  }
  const who = setters(pod, bad);
  return who.length ? forbid('seccompProfile', `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`) : ALLOWED;
};

const SYSCTLS_1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

function sysctls(allowed: readonly string[]): CheckFn {
  const ok = new Set(allowed);
  return ({ spec }) => {
    const list = podSecurityContext(spec)?.sysctls;
    const bad = (Array.isArray(list) ? list : []).map((s) => text(rec(s)?.name)).filter((n) => !ok.has(n));
    return bad.length ? forbid('forbidden sysctls', bad.join(', ')) : ALLOWED;
  };
}

/** Upstream's baseline checks (IDs as upstream's, which order the reasons of a message). */
export const BASELINE_CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minor: 0, fn: appArmor }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ minor: 0, fn: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minor: 0, fn: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ minor: 0, fn: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minor: 0, fn: hostPorts }] },
  { id: 'hostProbesAndHostLifecycle', level: 'baseline', versions: [{ minor: 34, fn: hostProbes }] },
  { id: 'privileged', level: 'baseline', versions: [{ minor: 0, fn: privileged }] },
  { id: 'procMount', level: 'baseline', versions: [{ minor: 0, fn: procMount }, { minor: 35, fn: relaxedInUserNamespace(procMount) }] },
  { id: 'seLinuxOptions', level: 'baseline', versions: [{ minor: 0, fn: seLinux(SELINUX_1_0) }, { minor: 31, fn: seLinux(SELINUX_1_31) }] },
  { id: 'seccompProfile_baseline', level: 'baseline', versions: [{ minor: 0, fn: seccompAnnotations }, { minor: 19, fn: seccompBaseline }] },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { minor: 0, fn: sysctls(SYSCTLS_1_0) },
      { minor: 27, fn: sysctls(SYSCTLS_1_27) },
      { minor: 29, fn: sysctls(SYSCTLS_1_29) },
      { minor: 32, fn: sysctls(SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minor: 0, fn: hostProcess }] },
];

export type { PodView };
