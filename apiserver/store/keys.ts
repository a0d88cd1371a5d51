import type { ResourceType } from '../registry/resource-type';

/**
 * Storage keys: /<group or "core">/<resource>/<namespace>/<name> for namespaced types and
 * /<group>/<resource>/<name> for cluster-scoped ones. Every prefix handed to Storage.list/watch ends
 * with "/" so that "pods/a" never matches "pods/ab".
 */
export function typePrefix(t: Pick<ResourceType, 'group' | 'resource'>): string {
  return `/${t.group || 'core'}/${t.resource}/`;
}

export function collectionPrefix(t: Pick<ResourceType, 'group' | 'resource' | 'namespaced'>, namespace: string): string {
  return t.namespaced && namespace ? `${typePrefix(t)}${namespace}/` : typePrefix(t);
}

export function objectKey(t: Pick<ResourceType, 'group' | 'resource' | 'namespaced'>, namespace: string, name: string): string {
  return t.namespaced ? `${typePrefix(t)}${namespace}/${name}` : `${typePrefix(t)}${name}`;
}
