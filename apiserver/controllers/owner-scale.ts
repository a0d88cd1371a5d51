import { canonicalGroup } from '../api/group-names';
import { getOrNull } from '../api/errors';
import type { KObject, OwnerReference } from '../api/types';
import type { ResourceRegistry } from '../registry/builtin';
import { num, rec } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import type { ControllerScale } from './disruption-status';

/** Reads one object; rejects only for errors other than NotFound (then null). */
export type ObjectGetter = (t: ResourceType, namespace: string, name: string) => Promise<KObject | null>;

/** The group and version of an apiVersion ("apps/v1", "v1"), the group in its canonical spelling. */
function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: canonicalGroup(apiVersion.slice(0, slash)), version: apiVersion.slice(slash + 1) };
}

/** Whether the type's schema has spec.replicas (upstream: the resource serves a scale sub-resource). */
function hasReplicas(t: ResourceType): boolean {
  const spec = t.schema.properties.spec;
  return spec?.type === 'object' && spec.properties.replicas !== undefined;
}

/** What the disruption controller asks of the registry and the store to find a controller's scale. */
export interface OwnerScaleDeps {
  registry: Pick<ResourceRegistry, 'byKind' | 'all'>;
  get: ObjectGetter;
}

/**
 * The desired scale of the controller a pod's controllerRef names, for any kind the registry
 * serves: its spec.replicas (upstream's finders for ReplicationController, ReplicaSet,
 * Deployment and StatefulSet, and its scale-client fallback for other kinds; here every kind is
 * read the same way, through the registry by apiVersion and kind). A ReplicaSet controlled by a
 * Deployment stands for the Deployment (its scale is the Deployment's). null when the object is
 * absent or has another uid; rejects when the kind is not served or has no replicas, with
 * upstream's messages.
 */
export function ownerScaleFinder(d: OwnerScaleDeps): (ref: OwnerReference, namespace: string) => Promise<ControllerScale | null> {
  const typeOf = (ref: OwnerReference): ResourceType => {
    const { group, version } = splitApiVersion(ref.apiVersion);
    const t = d.registry.byKind(group, version, ref.kind) ?? d.registry.all().find((x) => x.group === group && x.kind === ref.kind);
    if (!t) throw new Error(`no matches for kind "${ref.kind}" in version "${ref.apiVersion}"`);
    return t;
  };
  const read = async (ref: OwnerReference, namespace: string): Promise<{ t: ResourceType; obj: KObject } | null> => {
    const t = typeOf(ref);
    const obj = await d.get(t, t.namespaced ? namespace : '', ref.name);
    return obj && obj.metadata.uid === ref.uid ? { t, obj } : null;
  };
  const scaleOf = (t: ResourceType, obj: KObject): ControllerScale => {
    if (!hasReplicas(t)) throw new Error(`${t.resource}${t.group ? '.' + t.group : ''} does not implement the scale subresource`);
    // Go's defaulting sets replicas 1 on the workload kinds; an object stored without it means that.
    return { uid: obj.metadata.uid ?? '', replicas: num(rec(obj.spec)?.replicas) ?? 1 };
  };
  return async (ref, namespace) => {
    const found = await read(ref, namespace);
    if (!found) return null;
    const { group } = splitApiVersion(ref.apiVersion);
    if (ref.kind === 'ReplicaSet' && (group === 'apps' || group === 'extensions')) {
      const parent = found.obj.metadata.ownerReferences?.find((r) => r.controller === true);
      if (parent?.kind === 'Deployment') {
        const deployment = await read(parent, namespace).catch(() => null);
        if (deployment) return scaleOf(deployment.t, deployment.obj);
      }
    }
    return scaleOf(found.t, found.obj);
  };
}

/** An ObjectGetter over a store's get: NotFound is null. */
export function storeGetter(store: { get(t: ResourceType, namespace: string, name: string): Promise<KObject> }): ObjectGetter {
  return (t, namespace, name) => getOrNull(store.get(t, namespace, name));
}
