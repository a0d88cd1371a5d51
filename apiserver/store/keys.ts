import type { ResourceType } from '../registry/resource-type';

type Keyed = Pick<ResourceType, 'group' | 'resource' | 'storedAs'>;

/**
 * Storage keys: /<group or "core">/<resource>/<namespace>/<name> for namespaced types and
 * /<group>/<resource>/<name> for cluster-scoped ones, of the resource that stores the type's
 * objects (its own, or its `storedAs`). Every prefix handed to Storage.list/watch ends with "/" so
 * that "pods/a" never matches "pods/ab".
 */
export function typePrefix(t: Keyed): string {
  const at = t.storedAs ?? t;
  return `/${at.group || 'core'}/${at.resource}/`;
}

export function collectionPrefix(t: Keyed & Pick<ResourceType, 'namespaced'>, namespace: string): string {
  return t.namespaced && namespace ? `${typePrefix(t)}${namespace}/` : typePrefix(t);
}

export function objectKey(t: Keyed & Pick<ResourceType, 'namespaced'>, namespace: string, name: string): string {
  return t.namespaced ? `${typePrefix(t)}${namespace}/${name}` : `${typePrefix(t)}${name}`;
}
