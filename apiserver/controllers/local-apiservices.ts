import { isAlreadyExists, isConflict } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';

/** Upstream's label on the APIServices it registers for its own groups. */
export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';

const ctx = controllerContext('apiservice-autoregister');

/** The name stock clients expect: the group's k8s.io spelling (v1.rbac.authorization.k8s.io), "v1." for the core group. */
function servedGroupName(group: string): string {
  return group.replace(/\.svc\.io$/, '.k8s.io');
}

/**
 * Upstream's autoregister controller, at start: a local APIService (no service) for every group
 * version this server serves, labelled automanaged, with priorities in discovery order (earlier
 * groups higher); local APIServices it made for versions no longer served (--runtime-config) are
 * deleted. APIServices users made are left alone.
 */
export async function ensureLocalApiServices(store: ObjectStore, registry: ResourceRegistry): Promise<void> {
  const t = registry.lookup('apiregistration.svc.io', 'v1', 'apiservices');
  if (!t) return;
  const served = new Set(registry.served().map((x) => `${x.group}/${x.version}`));
  const groups = registry.groups().filter((g) => g.versions.some((v) => served.has(`${g.name}/${v}`)));
  const want = new Map<string, KObject>();
  groups.forEach((g, gi) => {
    const group = servedGroupName(g.name);
    g.versions
      .filter((v) => served.has(`${g.name}/${v}`))
      .forEach((version, vi) => {
        const name = `${version}.${group}`;
        want.set(name, {
          apiVersion: 'apiregistration.k8s.io/v1',
          kind: 'APIService',
          metadata: { name, labels: { [AUTOMANAGED_LABEL]: 'onstart' } },
          spec: { group, version, groupPriorityMinimum: Math.max(18000 - gi * 100, 100), versionPriority: Math.max(15 - vi, 1) },
        });
      });
  });
  const existing = (await store.list(t, '', { labelSelector: [], fieldSelector: [] })).items;
  for (const o of existing) {
    if (o.metadata.labels?.[AUTOMANAGED_LABEL] && !want.has(o.metadata.name ?? '')) await store.delete(t, '', o.metadata.name!, {}, ctx).catch(() => undefined);
  }
  for (const [name, o] of want) {
    if (existing.some((e) => e.metadata.name === name)) continue;
    try {
      await store.create(t, '', o, ctx);
    } catch (err) {
      if (!isAlreadyExists(err) && !isConflict(err)) throw err;
    }
  }
}
