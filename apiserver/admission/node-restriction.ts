import { isDeepStrictEqual } from 'node:util';
import { errors } from '../api/errors';
import type { KObject } from '../api/types';
import { nodeName } from '../api/node-identity';
import { canonicalGroup } from '../api/group-names';
import { LOCAL_PATH_FINALIZER, LOCAL_PATH_NODE_LABEL } from '../api/local-path';
import { isKubeletLabel, isMirrorPod, isNodeRestrictionLabel, isReservedLabel, MIRROR_POD_ANNOTATION, NODE_LEASE_NAMESPACE } from '../api/well-known';
import { podReferences } from '../registry/types/pod-references';
import { get, rec, recs, strAt } from '../registry/obj-access';
import type { AdmissionAttributes, AdmissionPlugin } from './admission';
import { forbiddenStatusChange, NODE_STATUS_WRITES, type NodeStatusSubresource } from './node-status-writes';

/** Reads a pod; null when absent. */
export type PodGetter = (namespace: string, name: string) => Promise<KObject | null>;
/** Reads a Node; null when absent. */
export type NodeGetter = (name: string) => Promise<KObject | null>;

/**
 * Upstream isForbiddenLabel: node-restriction labels, and labels under svc.io, kubernetes.io or
 * k8s.io other than the kubelet's (both spellings of each: a node sets kubernetes.io/hostname as
 * upstream's kubelet does, and may not set node-restriction.kubernetes.io labels).
 */
export function isForbiddenNodeLabel(key: string): boolean {
  if (isNodeRestrictionLabel(key)) return true;
  return isReservedLabel(key) && !isKubeletLabel(key);
}

/** Forbidden labels added, changed or removed between old and new (upstream getModifiedLabels + filter). */
export function forbiddenLabelChanges(labels: Record<string, string> | undefined, old: Record<string, string> | undefined): string[] {
  const a = labels ?? {};
  const b = old ?? {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k] && isForbiddenNodeLabel(k)).sort();
}

/**
 * NodeRestriction (A.7, upstream admission plugin of that name): a node (system:node:<name> in
 * system:nodes) may write only its own Node (not its taints, pod CIDRs or restricted labels), its
 * own Lease in svc-node-lease, the status of pods bound to it (the fields of NODE_STATUS_WRITES
 * only), mirror pods bound to it that it controls and that reference no other object, and delete
 * or evict pods bound to it, and ask for service account tokens only bound to a pod bound to it
 * that is not a mirror pod. Other users are not affected.
 */
export class NodeRestriction implements AdmissionPlugin {
  readonly name = 'NodeRestriction';

  constructor(
    private readonly getPod: PodGetter,
    private readonly getNode: NodeGetter,
  ) {}

  /** Rejects a node's write outside its own objects with 403. */
  async validate(a: AdmissionAttributes): Promise<void> {
    const node = nodeName(a.user);
    if (node === undefined) return;
    if (node === '') throw this.forbidden(a, `could not determine node from user "${a.user.username}"`);
    const g = a.type.group;
    const r = a.type.resource;
    if (g === '' && r === 'pods') return this.pod(node, a);
    if (g === '' && r === 'nodes') return this.node(node, a);
    if (g === '' && r === 'persistentvolumeclaims') return this.claim(node, a);
    if (g === '' && r === 'persistentvolumes') return this.localVolume(node, a);
    if (canonicalGroup(g) === 'coordination.svc.io' && r === 'leases') return this.lease(node, a);
    if (g === '' && r === 'serviceaccounts' && a.subresource === 'token' && a.operation === 'CREATE') return this.tokenRequest(node, a);
  }

  private forbidden(a: AdmissionAttributes, why: string) {
    const name = a.name || a.object?.metadata.name || '';
    return errors.forbidden(`${a.type.resource} "${name}" is forbidden: ${why}`);
  }

  private async pod(node: string, a: AdmissionAttributes): Promise<void> {
    switch (a.subresource) {
      case '':
        if (a.operation === 'CREATE') return this.mirrorPodCreate(node, a);
        if (a.operation === 'DELETE') {
          if (strAt(a.oldObject, 'spec', 'nodeName') !== node) throw this.forbidden(a, `node "${node}" can only delete pods with spec.nodeName set to itself`);
          return;
        }
        throw this.forbidden(a, `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
      case 'status':
        if (a.operation !== 'UPDATE') throw this.forbidden(a, `unexpected operation "${a.operation}"`);
        if (strAt(a.oldObject, 'spec', 'nodeName') !== node) throw this.forbidden(a, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
        return this.statusWrite(node, 'pods/status', a);
      case 'eviction': {
        if (a.operation !== 'CREATE') throw this.forbidden(a, `unexpected operation "${a.operation}"`);
        const pod = await this.getPod(a.namespace, a.name);
        if (!pod) throw errors.notFound('pods', a.name);
        if (strAt(pod, 'spec', 'nodeName') !== node) throw this.forbidden(a, `node "${node}" can only evict pods with spec.nodeName set to itself`);
        return;
      }
    }
    throw this.forbidden(a, `unexpected subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
  }

  /**
   * Upstream admitPodCreate: a node creates only mirror pods, bound to itself, controlled by its
   * own Node object (owner reference kind Node, apiVersion v1, its name and the Node's current
   * uid, controller, not blocking deletion), referencing no service account, secret, config map,
   * cluster trust bundle, claim or resource claim: a node may not widen what it can read (the
   * Node authorizer follows a pod's references) nor obtain a service account's credentials.
   */
  private async mirrorPodCreate(node: string, a: AdmissionAttributes): Promise<void> {
    const pod = a.object!;
    if (!isMirrorPod(pod)) throw this.forbidden(a, `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
    if (strAt(pod, 'spec', 'nodeName') !== node) throw this.forbidden(a, `node "${node}" can only create pods with spec.nodeName set to itself`);
    await this.checkOwner(node, a);
    const why = mirrorPodReference(pod);
    if (why) throw this.forbidden(a, `node "${node}" can not create pods that reference ${why}`);
  }

  private async checkOwner(node: string, a: AdmissionAttributes): Promise<void> {
    const owners = recs(a.object!.metadata.ownerReferences);
    if (owners.length > 1) throw this.forbidden(a, `node "${node}" can only create pods with a single owner reference set to itself`);
    const o = owners[0];
    if (!o || o.apiVersion !== 'v1' || o.kind !== 'Node' || o.name !== node) throw this.forbidden(a, `node "${node}" can only create pods with an owner reference set to itself`);
    if (o.controller !== true) throw this.forbidden(a, `node "${node}" can only create pods with a controller owner reference set to itself`);
    if (o.blockOwnerDeletion === true) throw this.forbidden(a, `node "${node}" must not set blockOwnerDeletion on an owner reference`);
    const self = await this.getNode(node);
    if (!self) throw errors.notFound('nodes', node);
    const uid = self.metadata.uid ?? '';
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    if (o.uid !== uid) throw this.forbidden(a, `node ${node} UID mismatch: expected ${uid} (the Node's) got ${String(o.uid ?? '')} (the owner reference's)`);
  }

  private node(node: string, a: AdmissionAttributes): void {
    const requested = a.name || a.object?.metadata.name || '';
    if (requested !== node) throw this.forbidden(a, `node "${node}" is not allowed to modify node "${requested}"`);
    if (a.operation === 'CREATE') {
      const bad = forbiddenLabelChanges(a.object?.metadata.labels, undefined);
      if (bad.length) throw this.forbidden(a, `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
      return;
    }
    if (a.operation !== 'UPDATE' || !a.object || !a.oldObject) return;
    const spec = rec(a.object.spec) ?? {};
    const oldSpec = rec(a.oldObject.spec) ?? {};
    if (!isDeepStrictEqual(spec.podCIDRs ?? [], oldSpec.podCIDRs ?? []) || (spec.podCIDR ?? '') !== (oldSpec.podCIDR ?? '')) {
      throw this.forbidden(a, `node "${node}" is not allowed to modify pod CIDRs`);
    }
    if (!isDeepStrictEqual(recs(get(a.object, 'spec', 'taints')), recs(get(a.oldObject, 'spec', 'taints')))) {
      throw this.forbidden(a, `node "${node}" is not allowed to modify taints`);
    }
    const bad = forbiddenLabelChanges(a.object.metadata.labels, a.oldObject.metadata.labels);
    if (bad.length) throw this.forbidden(a, `node "${node}" is not allowed to modify labels: ${bad.join(', ')}`);
    if (a.subresource === 'status') this.statusWrite(node, 'nodes/status', a);
  }

  private claim(node: string, a: AdmissionAttributes): void {
    if (a.subresource !== 'status') throw this.forbidden(a, `may only update PVC status`);
    if (a.operation !== 'UPDATE') throw this.forbidden(a, `unexpected operation "${a.operation}"`);
    this.statusWrite(node, 'persistentvolumeclaims/status', a);
  }

  /**
   * Beyond upstream (whose nodes never write volumes): svc's local-path volumes are held by a
   * finalizer the node removes once it removed the directory. A node may only take that
   * finalizer off a volume labelled with its name, changing nothing else.
   */
  private localVolume(node: string, a: AdmissionAttributes): void {
    const why = `node "${node}" may only remove the ${LOCAL_PATH_FINALIZER} finalizer of local-path volumes on it`;
    if (a.operation !== 'UPDATE' || a.subresource !== '' || !a.object || !a.oldObject) throw this.forbidden(a, why);
    if (a.oldObject.metadata.labels?.[LOCAL_PATH_NODE_LABEL] !== node) throw this.forbidden(a, why);
    const visible = (o: KObject) => {
      const m = o.metadata;
      return [o.spec, o.status, m.labels ?? {}, m.annotations ?? {}, m.ownerReferences ?? [], (m.finalizers ?? []).filter((f) => f !== LOCAL_PATH_FINALIZER)];
    };
    const added = (a.object.metadata.finalizers ?? []).some((f) => !(a.oldObject!.metadata.finalizers ?? []).includes(f));
    if (added || !isDeepStrictEqual(visible(a.object), visible(a.oldObject))) throw this.forbidden(a, why);
  }

  /** Refuses (403, naming the field) a status write that changes what NODE_STATUS_WRITES does not let a node change. */
  private statusWrite(node: string, sub: NodeStatusSubresource, a: AdmissionAttributes): void {
    if (!a.object || !a.oldObject) return;
    const rule = NODE_STATUS_WRITES[sub];
    const field = forbiddenStatusChange(rule, a.object, a.oldObject);
    if (field !== undefined) throw this.forbidden(a, `node "${node}" cannot update ${field} through ${sub} (a node may change only ${rule.summary})`);
  }

  /**
   * Upstream admitServiceAccount: a node asks for service account tokens only on behalf of a pod
   * bound to it, so the TokenRequest must name that pod (kind Pod, name and uid) in boundObjectRef;
   * a token therefore dies with the pod.
   */
  private async tokenRequest(node: string, a: AdmissionAttributes): Promise<void> {
    const ref = rec(get(a.object, 'spec', 'boundObjectRef'));
    const apiVersion = ref?.apiVersion === undefined || ref.apiVersion === '' ? 'v1' : ref.apiVersion;
    if (!ref || apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) throw this.forbidden(a, 'node requested token not bound to a pod');
    if (!ref.uid) throw this.forbidden(a, 'node requested token with a pod binding without a uid');
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    const pod = await this.getPod(a.namespace, String(ref.name));
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
    if (!pod) throw errors.notFound('pods', String(ref.name));
    if (pod.metadata.uid !== ref.uid) {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the client's value, of whatever JSON type, as String() prints it
      throw this.forbidden(a, `the UID in the bound object reference (${String(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    if (strAt(pod, 'spec', 'nodeName') !== node) throw this.forbidden(a, 'node requested token bound to a pod scheduled on a different node');
    // Upstream reaches the same end another way: a mirror pod has no service account there, and
    // the token handler refuses a binding to a pod of another account. Here a mirror pod stored
    // before that rule may still name one, so the refusal is explicit.
    if (isMirrorPod(pod)) throw this.forbidden(a, `node requested token bound to mirror pod "${pod.metadata.name ?? ''}"; mirror pods may not use service accounts`);
  }

  private lease(node: string, a: AdmissionAttributes): void {
    if (a.namespace !== NODE_LEASE_NAMESPACE) throw this.forbidden(a, `can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
    const name = a.operation === 'CREATE' ? (a.object?.metadata.name ?? '') : a.name;
    if (name !== node) throw this.forbidden(a, 'can only access node lease with the same name as the requesting node');
  }
}

/**
 * What a mirror pod references that it may not (upstream admitPodCreate, in its order): a service
 * account (any name, "default" too), secrets, config maps, cluster trust bundles, persistent
 * volume claims, resource claims. Undefined when none. Stricter than upstream in one place: the
 * claim of a generic ephemeral volume counts as a claim (the Node authorizer would let the node
 * read it), where upstream looks only at persistentVolumeClaim volumes.
 */
export function mirrorPodReference(pod: KObject): string | undefined {
  const refs = podReferences(pod);
  if (refs.serviceAccount) return 'a service account';
  if (refs.secrets.size) return 'secrets';
  if (refs.configMaps.size) return 'configmaps';
  const volumes = recs(get(pod, 'spec', 'volumes'));
  if (volumes.some((v) => recs(get(v, 'projected', 'sources')).some((src) => src.clusterTrustBundle !== undefined && src.clusterTrustBundle !== null))) return 'clustertrustbundles';
  if (refs.claims.size) return 'persistentvolumeclaims';
  if (recs(get(pod, 'spec', 'resourceClaims')).length) return 'resourceclaims';
  return undefined;
}
