import { isDeepStrictEqual } from 'node:util';
import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { get, rec, recs, str } from '../registry/obj-access';
import { canonicalQuantity, compareQuantities, parseQuantity } from '../registry/quantity';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';
import { forbiddenSubject } from './resource-quota';

/** Reads a RuntimeClass by name; null when absent. */
export type RuntimeClassGetter = (name: string) => Promise<KObject | null>;

const MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

/**
 * Upstream's RuntimeClass admission plugin, on pod creation. A pod naming a RuntimeClass that does
 * not exist is refused (403 "pod rejected: RuntimeClass "x" not found"). The class's
 * overhead.podFixed becomes the pod's spec.overhead (a pod already setting a different one is
 * refused); its scheduling.nodeSelector is merged into the pod's (a key with another value is
 * refused as a conflict) and its tolerations appended (those the pod already has, equal, are not
 * repeated: upstream merges away tolerations another one covers, too). Validation then refuses an
 * overhead that differs from the class's, or an overhead on a pod whose class defines none.
 */
export class RuntimeClassAdmission implements AdmissionPlugin {
  readonly name = 'RuntimeClass';

  constructor(private readonly getClass: RuntimeClassGetter) {}

  async mutate(a: AdmissionAttributes): Promise<void> {
    const pod = applies(a);
    if (!pod) return;
    const rc = await this.lookup(a, pod);
    if (!rc) return;
    const spec = (pod.spec ??= {}) as Record<string, unknown>;
    const fixed = rec(get(rc, 'overhead', 'podFixed'));
    if (fixed) {
      const mine = rec(spec.overhead);
      if (mine && Object.keys(mine).length > 0 && !sameResources(mine, fixed)) throw refused(a, MISMATCH);
      spec.overhead = canonical(fixed);
    }
    const sched = rec(rc.scheduling);
    if (!sched) return;
    const selector = rec(sched.nodeSelector) ?? {};
    const podSelector = { ...(rec(spec.nodeSelector) ?? {}) };
    for (const [k, v] of Object.entries(selector)) {
      if (k in podSelector && podSelector[k] !== v) {
        throw refused(a, `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${String(v)}; pod.spec.nodeSelector[${k}] = ${String(podSelector[k])}`);
      }
      podSelector[k] = v;
    }
    if (Object.keys(podSelector).length > 0) spec.nodeSelector = podSelector;
    const tolerations = recs(spec.tolerations);
    const added = recs(sched.tolerations).filter((t) => !tolerations.some((have) => isDeepStrictEqual(have, t)));
    if (added.length > 0) spec.tolerations = [...tolerations, ...structuredClone(added)];
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = applies(a);
    if (!pod) return;
    const rc = await this.lookup(a, pod);
    const fixed = rc ? rec(get(rc, 'overhead', 'podFixed')) : undefined;
    const mine = rec(get(pod, 'spec', 'overhead'));
    if (fixed) {
      if (!mine || !sameResources(mine, fixed)) throw refused(a, MISMATCH);
    } else if (mine) {
      throw refused(a, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    }
  }

  private async lookup(a: AdmissionAttributes, pod: KObject): Promise<KObject | null> {
    const name = str(get(pod, 'spec', 'runtimeClassName'));
    if (!name) return null;
    const rc = await this.getClass(name);
    if (!rc) throw refused(a, `pod rejected: RuntimeClass "${name}" not found`);
    return rc;
  }
}

/** The pod being created, or undefined when the plugin ignores the request (upstream: pods, create, no sub-resource). */
function applies(a: AdmissionAttributes): KObject | undefined {
  if (a.type.group !== '' || a.type.resource !== 'pods' || a.subresource !== '' || a.operation !== 'CREATE') return undefined;
  return a.object;
}

function refused(a: AdmissionAttributes, why: string) {
  return errors.forbidden(`${forbiddenSubject(a)} is forbidden: ${why}`);
}

/** Semantic equality of two resource lists (upstream apiequality.Semantic: quantities compared by value). */
function sameResources(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  if (!isDeepStrictEqual(ka, kb)) return false;
  return ka.every((k) => {
    const qa = quantity(a[k]);
    const qb = quantity(b[k]);
    return qa !== undefined && qb !== undefined && compareQuantities(qa, qb) === 0;
  });
}

function quantity(v: unknown) {
  return typeof v === 'string' || typeof v === 'number' ? parseQuantity(v) : undefined;
}

/** The class's overhead in canonical quantity form, as the pod's defaults would write it. */
function canonical(m: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) out[k] = (typeof v === 'string' || typeof v === 'number' ? canonicalQuantity(v) : undefined) ?? v;
  return out;
}
