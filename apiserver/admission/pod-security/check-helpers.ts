/** What the Pod Security checks share: the pod they read, their result and upstream's wording helpers. */
import { rec } from '../../registry/obj-access';

type Obj = Record<string, unknown>;

/** A pod's metadata and spec as the checks read them (a Pod, or a controller's pod template). */
export interface PodView {
  annotations: Record<string, string>;
  spec: Obj;
}

/** One check's verdict: a reason ("host namespaces") and a detail naming what offends. */
export type CheckResult = { allowed: true } | { allowed: false; reason: string; detail: string };
export const ALLOWED: CheckResult = { allowed: true };

export function forbid(reason: string, detail: string): CheckResult {
  return { allowed: false, reason, detail };
}

export type CheckFn = (pod: PodView) => CheckResult;

/** A container as the checks see it: every kind (init, regular, ephemeral) alike, as upstream's visitContainers. */
export interface ContainerView {
  name: string;
  sc: Obj | undefined;
  raw: Obj;
}

/** Init containers, then containers, then ephemeral containers (upstream's order, which messages follow). */
export function containers(spec: Obj): ContainerView[] {
  const out: ContainerView[] = [];
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    const list = spec[key];
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      const raw = rec(c) ?? {};
      out.push({ name: text(raw.name), sc: rec(raw.securityContext), raw });
    }
  }
  return out;
}

export function podSecurityContext(spec: Obj): Obj | undefined {
  return rec(spec.securityContext);
}

/** Windows pods are exempt from the Linux-only restricted checks (upstream since 1.25). */
export function isWindows(spec: Obj): boolean {
  return rec(spec.os)?.name === 'windows';
}

/** A pod in its own user namespace (hostUsers: false) is relaxed from some checks (upstream since 1.35). */
export function inUserNamespace(spec: Obj): boolean {
  return spec.hostUsers === false;
}

/** A field's value as message text: strings as they are, nothing as "", anything else as JSON. */
export function text(v: unknown): string {
  if (typeof v === 'string') return v;
  return v === undefined || v === null ? '' : JSON.stringify(v);
}

export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

export function pluralize(singular: string, plural: string, count: number): string {
  return count === 1 ? singular : plural;
}

/** `container "a"` / `containers "a", "b"`. */
export function containerList(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** Sorted distinct strings (Go's sets.List). */
export function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

/** "pod and containers "a", "b"": who set a bad value, pod first. */
export function setters(pod: boolean, badContainers: readonly string[]): string[] {
  const out = pod ? ['pod'] : [];
  if (badContainers.length > 0) out.push(containerList(badContainers));
  return out;
}
