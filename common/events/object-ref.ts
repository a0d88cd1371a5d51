import type { EventObjectRef } from './recorder';

/** What a reference is made from: any API object (both daemons' object types have this shape). */
interface Referable {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/**
 * The reference an event about `obj` carries (upstream's reference.GetReference): its apiVersion,
 * kind, namespace, name, uid and resourceVersion; fieldPath names a part of it (a container:
 * `spec.containers{name}`). kind and apiVersion may be given for objects that do not carry them.
 */
export function referenceTo(obj: Referable, o: { fieldPath?: string; kind?: string; apiVersion?: string } = {}): EventObjectRef {
  const m = obj.metadata ?? {};
  const ref: EventObjectRef = { kind: obj.kind || o.kind || '', name: m.name ?? '' };
  const apiVersion = obj.apiVersion || o.apiVersion;
  if (apiVersion) ref.apiVersion = apiVersion;
  if (m.namespace) ref.namespace = m.namespace;
  if (m.uid) ref.uid = m.uid;
  if (m.resourceVersion) ref.resourceVersion = m.resourceVersion;
  if (o.fieldPath) ref.fieldPath = o.fieldPath;
  return ref;
}
