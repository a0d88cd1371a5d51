import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { forbidden, invalid } from '../field-errors';
import { get, rec, recs, type JsonMap } from '../obj-access';
import { diffPaths, semanticEqual } from '../semantic-equal';

/**
 * Upstream ValidatePodUpdate: a pod's spec is immutable except container and init-container
 * images, activeDeadlineSeconds (set, or lowered), added tolerations (existing ones may only change
 * tolerationSeconds), removed scheduling gates, and terminationGracePeriodSeconds from negative to 1.
 */

const UPDATABLE =
  '`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

function onlyAddedTolerations(next: JsonMap[], prev: JsonMap[]): Cause[] {
  for (const old of prev) {
    const found = next.some((n) => semanticEqual({ ...old, tolerationSeconds: n.tolerationSeconds }, n));
    if (!found) return [forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return [];
}

export function validatePodUpdate(o: KObject, old: KObject, subresource = ''): Cause[] {
  const spec = rec(o.spec) ?? {};
  const oldSpec = rec(old.spec) ?? {};
  const out: Cause[] = [];
  for (const list of ['containers', 'initContainers']) {
    if (recs(spec[list]).length !== recs(oldSpec[list]).length) {
      return [forbidden(`spec.${list}`, 'pod updates may not add or remove containers')];
    }
  }
  const ads = get(spec, 'activeDeadlineSeconds');
  const oldAds = get(oldSpec, 'activeDeadlineSeconds');
  if (typeof ads === 'number') {
    if (ads < 0 || ads > 2147483647) return [invalid('spec.activeDeadlineSeconds', ads, 'must be between 0 and 2147483647, inclusive')];
    if (typeof oldAds === 'number' && oldAds < ads) return [invalid('spec.activeDeadlineSeconds', ads, 'must be less than or equal to previous value')];
  } else if (typeof oldAds === 'number') {
    out.push(invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
  }
  out.push(...onlyAddedTolerations(recs(spec.tolerations), recs(oldSpec.tolerations)));

  // Compare the spec with every updatable field taken from the old pod.
  const munged: JsonMap = structuredClone(spec);
  for (const list of ['containers', 'initContainers']) {
    const olds = recs(oldSpec[list]);
    recs(munged[list]).forEach((c, i) => {
      c.image = olds[i]?.image;
    });
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  munged.tolerations = oldSpec.tolerations;
  // Scheduling gates may only be removed.
  const oldGates = recs(oldSpec.schedulingGates).map((g) => g.name);
  if (recs(spec.schedulingGates).every((g) => oldGates.includes(g.name))) munged.schedulingGates = oldSpec.schedulingGates;
  // pods/ephemeralcontainers (upstream ValidatePodEphemeralContainersUpdate) may only add
  // ephemeral containers: the ones there stay exactly as they are.
  if (subresource === 'ephemeralcontainers') {
    const next = new Map(recs(spec.ephemeralContainers).map((c) => [String(c.name), c]));
    for (const c of recs(oldSpec.ephemeralContainers)) {
      const now = next.get(String(c.name));
      if (!now) return [forbidden('spec.ephemeralContainers', `existing ephemeral containers "${String(c.name)}" may not be removed`)];
      if (!semanticEqual(now, c)) return [forbidden('spec.ephemeralContainers', `existing ephemeral containers "${String(c.name)}" may not be changed`)];
    }
    munged.ephemeralContainers = oldSpec.ephemeralContainers;
    if (munged.ephemeralContainers === undefined) delete munged.ephemeralContainers;
  }
  // pods/binding (upstream BindingREST) may set spec.nodeName once, on a pod not yet bound.
  if (subresource === 'binding' && !oldSpec.nodeName) {
    if (oldSpec.nodeName === undefined) delete munged.nodeName;
    else munged.nodeName = oldSpec.nodeName;
  }
  const tgps = oldSpec.terminationGracePeriodSeconds;
  if (typeof tgps === 'number' && tgps < 0 && munged.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = tgps;
  if (!semanticEqual(munged, oldSpec)) {
    const changed = diffPaths(oldSpec, munged).map((p) => `spec.${p}`);
    out.push(forbidden('spec', `pod updates may not change fields other than ${UPDATABLE}\n  changed: ${changed.join(', ')}`));
  }
  return out;
}
