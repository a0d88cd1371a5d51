import { errors } from '../../api/errors';
import type { KObject } from '../../api/types';
import { rec } from '../../registry/obj-access';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission';
import { forbiddenSubject } from '../resource-quota';
import type { PodView } from './check-helpers';
import { evaluate, verdictDetail, verdictReasons, type Verdict } from './evaluator';
import { compareLevels, levelVersionString, policyFromLabels, sameLevelVersion, versionString, type LabelError, type LevelVersion, type Policy } from './levels';

/** The cluster-wide defaults and exemptions of the admission configuration file (upstream's PodSecurityConfiguration). */
export interface PodSecurityConfig {
  defaults: Policy;
  exemptions: { usernames: string[]; namespaces: string[]; runtimeClasses: string[] };
}

/** What the plugin reads: a namespace by name (undefined when there is none) and the pods of one. */
export interface PodSecurityAccess {
  namespace(name: string): Promise<KObject | undefined>;
  pods(namespace: string): Promise<KObject[]>;
}

/** Upstream's bound on the pods a namespace label change checks (namespaceMaxPodsToCheck). */
const MAX_PODS_TO_CHECK = 3000;

/** Pod sub-resources that carry no pod spec worth checking (upstream's ignoredPodSubresources). */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** Where each workload kind keeps its pod template (upstream's DefaultPodSpecExtractor). */
const TEMPLATE_PATHS: Record<string, string[]> = {
  '/podtemplates': ['template'],
  '/replicationcontrollers': ['spec', 'template'],
  'apps/replicasets': ['spec', 'template'],
  'apps/deployments': ['spec', 'template'],
  'apps/statefulsets': ['spec', 'template'],
  'apps/daemonsets': ['spec', 'template'],
  'batch/jobs': ['spec', 'template'],
  'batch/cronjobs': ['spec', 'jobTemplate', 'spec', 'template'],
};

function podView(metadata: unknown, spec: unknown): PodView {
  const annotations = rec(rec(metadata)?.annotations) ?? {};
  return { annotations: annotations as Record<string, string>, spec: rec(spec) ?? {} };
}

function templateOf(obj: KObject, path: string[]): PodView | undefined {
  let cur: unknown = obj;
  for (const key of path) cur = rec(cur)?.[key];
  const t = rec(cur);
  return t ? podView(t.metadata, t.spec) : undefined;
}

/**
 * PodSecurity admission (upstream's built-in successor of PodSecurityPolicy, k8s.io/pod-security-admission):
 * the namespace's `pod-security.svc.io/*` or `pod-security.kubernetes.io/*` labels choose a level
 * and version for each mode. enforce refuses pods that violate it (403, upstream's message); audit
 * adds the `pod-security.kubernetes.io/audit-violations` audit annotation; warn sends a Warning.
 * Workload objects with pod templates are checked for audit and warn only, never refused. A
 * namespace whose labels cannot be read is refused (422); one whose enforce level tightens gets a
 * warning for each kind of violation among its existing pods.
 */
export class PodSecurityAdmission implements AdmissionPlugin {
  readonly name = 'PodSecurity';
  /** Its refusals are worded as upstream's ("violates PodSecurity ..."), with no plugin suffix. */
  readonly namesItself = true;

  constructor(
    private readonly config: PodSecurityConfig,
    private readonly access: PodSecurityAccess,
  ) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    const key = `${a.type.group}/${a.type.resource}`;
    if (key === '/namespaces') return this.validateNamespace(a);
    if (key === '/pods') return this.validatePod(a);
    const path = TEMPLATE_PATHS[key];
    if (path && !a.subresource) return this.validateTemplate(a, path);
  }

  private exempt(a: AdmissionAttributes): 'namespace' | 'user' | undefined {
    if (a.namespace && this.config.exemptions.namespaces.includes(a.namespace)) return 'namespace';
    if (a.user.username && this.config.exemptions.usernames.includes(a.user.username)) return 'user';
    return undefined;
  }

  private async policyOf(a: AdmissionAttributes): Promise<{ policy: Policy; errors: LabelError[] }> {
    const ns = await this.access.namespace(a.namespace);
    if (!ns) throw errors.internal(`failed to lookup namespace "${a.namespace}"`);
    return policyFromLabels(ns.metadata.labels, this.config.defaults);
  }

  private async validatePod(a: AdmissionAttributes): Promise<void> {
    if (IGNORED_POD_SUBRESOURCES.has(a.subresource) || !a.object) return;
    const why = this.exempt(a);
    if (why) return annotate(a, 'exempt', why);
    const { policy, errors: labelErrors } = await this.policyOf(a);
    if (labelErrors.length === 0 && [policy.enforce, policy.audit, policy.warn].every((lv) => lv.level === 'privileged')) {
      return annotate(a, 'enforce-policy', 'privileged:latest');
    }
    if (a.operation === 'UPDATE' && a.oldObject && !significantUpdate(a.object, a.oldObject)) return;
    this.evaluate(a, policy, labelErrors, podView(a.object.metadata, a.object.spec), true);
  }

  private async validateTemplate(a: AdmissionAttributes, path: string[]): Promise<void> {
    if (!a.object || this.exempt(a)) return;
    const { policy, errors: labelErrors } = await this.policyOf(a);
    if (labelErrors.length === 0 && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const pod = templateOf(a.object, path);
    if (pod) this.evaluate(a, policy, labelErrors, pod, false);
  }

  private evaluate(a: AdmissionAttributes, policy: Policy, labelErrors: LabelError[], pod: PodView, enforce: boolean): void {
    const runtimeClass = pod.spec.runtimeClassName;
    if (typeof runtimeClass === 'string' && runtimeClass && this.config.exemptions.runtimeClasses.includes(runtimeClass)) {
      return annotate(a, 'exempt', 'runtimeClass');
    }
    if (labelErrors.length) annotate(a, 'error', `Failed to parse policy: ${labelErrors.map(formatLabelError).join(', ')}`);
    const verdicts = new Map<string, Verdict>();
    const verdict = (lv: LevelVersion): Verdict => {
      const key = levelVersionString(lv);
      let v = verdicts.get(key);
      if (!v) verdicts.set(key, (v = evaluate(lv, pod)));
      return v;
    };
    if (enforce) {
      annotate(a, 'enforce-policy', levelVersionString(policy.enforce));
      const v = verdict(policy.enforce);
      if (!v.allowed) throw errors.forbidden(`${forbiddenSubject(a)} is forbidden: violates PodSecurity "${levelVersionString(policy.enforce)}": ${verdictDetail(v)}`);
    }
    const audit = verdict(policy.audit);
    if (!audit.allowed) annotate(a, 'audit-violations', `would violate PodSecurity "${levelVersionString(policy.audit)}": ${verdictDetail(audit)}`);
    const warn = verdict(policy.warn);
    if (!warn.allowed) warnClient(a, `would violate PodSecurity "${levelVersionString(policy.warn)}": ${verdictDetail(warn)}`);
  }

  private async validateNamespace(a: AdmissionAttributes): Promise<void> {
    if (a.subresource || !a.object) return;
    const name = a.object.metadata.name ?? a.name;
    const next = policyFromLabels(a.object.metadata.labels, this.config.defaults);
    const invalid = () =>
      errors.invalid(
        'Namespace',
        name,
        next.errors.map((e) => ({ reason: 'FieldValueInvalid', field: e.field, message: `Invalid value: ${JSON.stringify(e.value)}: ${e.detail}` })),
      );
    const exemptWarning = () => {
      const w = this.exemptNamespaceWarning(name, next.policy, a.object!.metadata.labels ?? {});
      if (w) warnClient(a, w);
    };
    if (a.operation === 'CREATE') {
      if (next.errors.length) throw invalid();
      if (this.config.exemptions.namespaces.includes(name)) exemptWarning();
      return;
    }
    const prev = policyFromLabels(a.oldObject?.metadata.labels, this.config.defaults);
    if (next.errors.length && JSON.stringify(next.errors) !== JSON.stringify(prev.errors)) throw invalid();
    const [n, o] = [next.policy.enforce, prev.policy.enforce];
    if (sameLevelVersion(n, o) || n.level === 'privileged') return;
    if (versionString(n.version) === versionString(o.version) && compareLevels(n.level, o.level) < 1) return;
    if (this.config.exemptions.namespaces.includes(name)) return exemptWarning();
    for (const w of await this.existingPodWarnings(name, n)) warnClient(a, w);
  }

  /** Upstream's EvaluatePodsInNamespace: one warning per kind of violation, naming the first pod (by name) and how many others. */
  private async existingPodWarnings(namespace: string, enforce: LevelVersion): Promise<string[]> {
    const pods = prioritise((await this.access.pods(namespace)).filter((p) => !this.exemptRuntimeClass(p)));
    const checked = pods.slice(0, MAX_PODS_TO_CHECK);
    const seen = new Map<string, { pod: string; count: number }>();
    for (const p of checked) {
      const v = evaluate(enforce, podView(p.metadata, p.spec));
      if (v.allowed) continue;
      const reason = verdictReasons(v);
      const name = p.metadata.name ?? '';
      const c = seen.get(reason);
      if (!c) seen.set(reason, { pod: name, count: 1 });
      else {
        c.count++;
        if (name < c.pod) c.pod = name;
      }
    }
    const out: string[] = [];
    if (checked.length < pods.length) out.push(`new PodSecurity enforce level only checked against the first ${checked.length} of ${pods.length} existing pods`);
    if (seen.size) out.push(`existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${levelVersionString(enforce)}"`);
    const perPod = [...seen].map(([reason, c]) => {
      const others = c.count === 1 ? '' : c.count === 2 ? ' (and 1 other pod)' : ` (and ${c.count - 1} other pods)`;
      return `${c.pod}${others}: ${reason}`;
    });
    return [...out, ...perPod.sort()];
  }

  private exemptRuntimeClass(p: KObject): boolean {
    const rc = rec(p.spec)?.runtimeClassName;
    return typeof rc === 'string' && rc !== '' && this.config.exemptions.runtimeClasses.includes(rc);
  }

  /** Upstream's warning for labels on an exempt namespace: the non-privileged modes its labels set, unless they are the defaults. */
  private exemptNamespaceWarning(name: string, policy: Policy, labels: Record<string, string>): string | undefined {
    const d = this.config.defaults;
    const modes = ['enforce', 'audit', 'warn'] as const;
    if (modes.every((m) => policy[m].level === 'privileged')) return undefined;
    if (modes.every((m) => equivalent(policy[m], d[m]))) return undefined;
    const labelled = (mode: string) => Object.keys(labels).some((k) => /^pod-security\.(svc\.io|kubernetes\.io)\//.test(k) && (k.endsWith(`/${mode}`) || k.endsWith(`/${mode}-version`)));
    const parts = modes.filter((m) => policy[m].level !== 'privileged' && labelled(m)).map((m) => `${m}=${levelVersionString(policy[m])}`);
    return `namespace "${name}" is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`;
  }
}

/** Upstream's LevelVersion.Equivalent: privileged is privileged at any version. */
function equivalent(a: LevelVersion, b: LevelVersion): boolean {
  return (a.level === 'privileged' && b.level === 'privileged') || sameLevelVersion(a, b);
}

function formatLabelError(e: LabelError): string {
  return `${e.field}: Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`;
}

/** One pod per controller first, the rest after (upstream's prioritizePods), so the bounded check sees variety. */
function prioritise(pods: KObject[]): KObject[] {
  const first: KObject[] = [];
  const rest: KObject[] = [];
  const controllers = new Set<string>();
  for (const p of pods) {
    const ref = (p.metadata.ownerReferences ?? []).find((r) => r.controller === true);
    if (!ref) first.push(p);
    else if (controllers.has(ref.uid)) rest.push(p);
    else {
      controllers.add(ref.uid);
      first.push(p);
    }
  }
  return [...first, ...rest];
}

/** An update is checked only when it can change what runs (upstream's isSignificantPodUpdate: images, container counts, ephemeral containers). */
function significantUpdate(pod: KObject, old: KObject): boolean {
  const list = (o: KObject, k: string) => (Array.isArray(rec(o.spec)?.[k]) ? (rec(o.spec)![k] as unknown[]).map((c) => rec(c) ?? {}) : []);
  for (const k of ['containers', 'initContainers']) {
    const [a, b] = [list(pod, k), list(old, k)];
    if (a.length !== b.length || a.some((c, i) => c.image !== b[i].image)) return true;
  }
  const oldEphemeral = new Map(list(old, 'ephemeralContainers').map((c) => [c.name, c]));
  return list(pod, 'ephemeralContainers').some((c) => !oldEphemeral.has(c.name) || oldEphemeral.get(c.name)!.image !== c.image);
}

/** Adds `pod-security.kubernetes.io/<key>` to the request's audit annotations (upstream's prefix). */
function annotate(a: AdmissionAttributes, key: string, value: string): void {
  (a.auditAnnotations ??= {})[`pod-security.kubernetes.io/${key}`] = value;
}

function warnClient(a: AdmissionAttributes, text: string): void {
  (a.warnings ??= []).push(text);
}
