import path from 'node:path/posix';
import { isAlreadyExists, isConflict } from '../api/errors';
import {
  DEFAULT_LOCAL_PATH_DIR,
  LOCAL_PATH_CLASS,
  LOCAL_PATH_FINALIZER,
  LOCAL_PATH_NODE_LABEL,
  LOCAL_PATH_PROVISIONER,
  localPathDirName,
} from '../api/local-path';
import type { KObject } from '../api/types';
import { HOSTNAME_LABEL } from '../api/well-known';
import { upstreamKey } from '../api/group-names';
import { get, rec, str, strs } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import { BINDING_WAIT_FOR_FIRST_CONSUMER, DEFAULT_CLASS_ANNOTATION, RECLAIM_DELETE } from '../registry/types/storage-common';
import { ANN_PROVISIONED_BY } from '../scheduler/volume-match';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';

/**
 * The built-in local-path provisioner (issue 20 item 5, as the one k3s ships): the volume the PV
 * binder creates for a claim of a class whose provisioner is svc.io/local-path, once the claim has
 * a node (the scheduler's selected-node annotation). The volume is a hostPath directory
 * (DirectoryOrCreate) at `<nodePath>/<pv>_<namespace>_<claim>`, pinned to the node by node
 * affinity, pre-bound to the claim (claimRef with its uid), and held by a finalizer the node's
 * agent removes after removing the directory. svc-apiserver never touches node disks itself: the
 * agent creates the directory (mode 0777, as k3s) when the pod mounts it.
 */

/** The PersistentVolume for the claim on the node, or why the claim cannot have one (the ProvisioningFailed message). */
export function localPathVolume(claim: KObject, storageClass: KObject, node: KObject): { pv: KObject } | { error: string } {
  const spec = rec(claim.spec) ?? {};
  const modes = strs(spec.accessModes);
  if (modes.some((m) => m !== 'ReadWriteOnce' && m !== 'ReadWriteOncePod')) return { error: `access modes ${modes.join(', ')} are not supported by ${LOCAL_PATH_PROVISIONER}: only ReadWriteOnce and ReadWriteOncePod (a directory on one node)` };
  if ((str(spec.volumeMode) ?? 'Filesystem') !== 'Filesystem') return { error: `volumeMode ${str(spec.volumeMode)} is not supported by ${LOCAL_PATH_PROVISIONER}: only Filesystem` };
  if (rec(spec.selector)) return { error: `claim.spec.selector is not supported by ${LOCAL_PATH_PROVISIONER}` };
  const storage = get(spec, 'resources', 'requests', 'storage');
  if (typeof storage !== 'string' && typeof storage !== 'number') return { error: 'claim.spec.resources.requests.storage is required' };
  const base = str(rec(storageClass.parameters)?.nodePath) ?? DEFAULT_LOCAL_PATH_DIR;
  if (!path.isAbsolute(base)) return { error: `the nodePath parameter of StorageClass "${storageClass.metadata.name}" must be an absolute path, not "${base}"` };
  const ns = claim.metadata.namespace ?? '';
  const name = `pvc-${claim.metadata.uid ?? ''}`;
  const nodeName = node.metadata.name ?? '';
  const pv: KObject = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      labels: { [LOCAL_PATH_NODE_LABEL]: nodeName },
      annotations: { [ANN_PROVISIONED_BY]: LOCAL_PATH_PROVISIONER },
      finalizers: [LOCAL_PATH_FINALIZER],
    },
    spec: {
      capacity: { storage: String(storage) },
      accessModes: modes,
      persistentVolumeReclaimPolicy: str(storageClass.reclaimPolicy) ?? RECLAIM_DELETE,
      storageClassName: storageClass.metadata.name,
      mountOptions: strs(storageClass.mountOptions).length ? strs(storageClass.mountOptions) : undefined,
      volumeMode: 'Filesystem',
      hostPath: { path: path.join(base, localPathDirName(name, ns, claim.metadata.name ?? '')), type: 'DirectoryOrCreate' },
      nodeAffinity: { required: { nodeSelectorTerms: [nodeTerm(node)] } },
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: ns, name: claim.metadata.name, uid: claim.metadata.uid },
    },
  };
  if (!strs(storageClass.mountOptions).length) delete (pv.spec as Record<string, unknown>).mountOptions;
  return { pv };
}

/** The node's hostname label in upstream's spelling (kubectl describe pv and stock schedulers read it), else the node's name as a field. */
function nodeTerm(node: KObject): Record<string, unknown> {
  const labels = node.metadata.labels ?? {};
  const upstream = upstreamKey(HOSTNAME_LABEL) ?? HOSTNAME_LABEL;
  const hostname = labels[upstream] ?? labels[HOSTNAME_LABEL];
  if (hostname) return { matchExpressions: [{ key: labels[upstream] ? upstream : HOSTNAME_LABEL, operator: 'In', values: [hostname] }] };
  return { matchFields: [{ key: 'metadata.name', operator: 'In', values: [node.metadata.name ?? ''] }] };
}

/** The default class created at start: local-path, WaitForFirstConsumer, Delete, marked default. */
export function localPathStorageClass(): KObject {
  return {
    apiVersion: 'storage.svc.io/v1',
    kind: 'StorageClass',
    metadata: { name: LOCAL_PATH_CLASS, annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
    provisioner: LOCAL_PATH_PROVISIONER,
    reclaimPolicy: RECLAIM_DELETE,
    volumeBindingMode: BINDING_WAIT_FOR_FIRST_CONSUMER,
  };
}

/**
 * Creates the local-path class when absent (not at all with --local-path-provisioner=false). A
 * class an operator edited is left as it is; a deleted one comes back at the next start, as k3s
 * re-applies its manifest; an operator who does not want it turns the flag off.
 */
export async function ensureLocalPathClass(store: ObjectStore, classes: ResourceType): Promise<void> {
  try {
    await store.create(classes, '', localPathStorageClass(), controllerContext('local-path-provisioner'));
  } catch (err) {
    if (!isAlreadyExists(err) && !isConflict(err)) throw err;
  }
}
