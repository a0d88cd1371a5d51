import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import { strAt } from '../registry/obj-access';
import type { TypedHandler } from '../store/list-watch';
import { podReferences } from '../registry/types/pod-references';
import { LOCAL_PATH_NODE_LABEL } from '../api/local-path';

type RefKind = 'secret' | 'configmap' | 'pvc' | 'serviceaccount';

interface PodEntry {
  node: string;
  refs: string[];
}

/**
 * Which objects belong to which node (A.7), as upstream's node authorizer graph: pods bound to a
 * node (spec.nodeName), the secrets, config maps, claims and service accounts those pods name, and
 * the volumes bound to those claims. Kept current from pod and claim watches; every question is a
 * map lookup.
 */
export class NodeGraph implements TypedHandler {
  private readonly pods = new Map<string, PodEntry>();
  /** node → "kind/ns/name" → number of its pods naming it. */
  private readonly refs = new Map<string, Map<string, number>>();
  /** claim "ns/name" → bound volume name. */
  private readonly claimVolume = new Map<string, string>();
  /** volume name → claims bound to it. */
  private readonly volumeClaims = new Map<string, Set<string>>();
  /** local-path volume name → the node its LOCAL_PATH_NODE_LABEL names. */
  private readonly localVolumes = new Map<string, string>();

  upsert(t: ResourceType, obj: KObject): void {
    if (t.resource === 'pods') this.setPod(obj);
    else if (t.resource === 'persistentvolumeclaims') this.setClaim(obj);
    else if (t.resource === 'persistentvolumes') this.setVolume(obj);
  }

  remove(t: ResourceType, obj: KObject): void {
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
    if (t.resource === 'pods') this.dropPod(key);
    else if (t.resource === 'persistentvolumeclaims') this.dropClaim(key);
    else if (t.resource === 'persistentvolumes') this.localVolumes.delete(obj.metadata.name ?? '');
  }

  /** The node a local-path volume is labelled with (svc's local-path provisioner), or undefined. */
  localVolumeNode(volume: string): string | undefined {
    return this.localVolumes.get(volume);
  }

  private setVolume(pv: KObject): void {
    const node = pv.metadata.labels?.[LOCAL_PATH_NODE_LABEL];
    if (node) this.localVolumes.set(pv.metadata.name ?? '', node);
    else this.localVolumes.delete(pv.metadata.name ?? '');
  }

  /** True when the pod is bound to the node. */
  hasPod(node: string, namespace: string, name: string): boolean {
    return this.pods.get(`${namespace}/${name}`)?.node === node;
  }

  /** True when a pod bound to the node names the object. */
  references(node: string, kind: RefKind, namespace: string, name: string): boolean {
    return (this.refs.get(node)?.get(`${kind}/${namespace}/${name}`) ?? 0) > 0;
  }

  /** True when the volume is bound to a claim that a pod on the node uses. */
  hasVolume(node: string, volume: string): boolean {
    for (const claim of this.volumeClaims.get(volume) ?? []) {
      const slash = claim.indexOf('/');
      if (this.references(node, 'pvc', claim.slice(0, slash), claim.slice(slash + 1))) return true;
    }
    return false;
  }

  /** Number of pods known (diagnostics). */
  podCount(): number {
    return this.pods.size;
  }

  private setPod(pod: KObject): void {
    const ns = pod.metadata.namespace ?? '';
    const key = `${ns}/${pod.metadata.name ?? ''}`;
    this.dropPod(key);
    const node = strAt(pod, 'spec', 'nodeName');
    if (!node) return;
    const r = podReferences(pod);
    const refs: string[] = [];
    for (const s of r.secrets) refs.push(`secret/${ns}/${s}`);
    for (const c of r.configMaps) refs.push(`configmap/${ns}/${c}`);
    for (const c of r.claims) refs.push(`pvc/${ns}/${c}`);
    if (r.serviceAccount) refs.push(`serviceaccount/${ns}/${r.serviceAccount}`);
    this.pods.set(key, { node, refs });
    let m = this.refs.get(node);
    if (!m) this.refs.set(node, (m = new Map<string, number>()));
    for (const ref of refs) m.set(ref, (m.get(ref) ?? 0) + 1);
  }

  private dropPod(key: string): void {
    const e = this.pods.get(key);
    if (!e) return;
    this.pods.delete(key);
    const m = this.refs.get(e.node);
    if (!m) return;
    for (const ref of e.refs) {
      const n = (m.get(ref) ?? 0) - 1;
      if (n > 0) m.set(ref, n);
      else m.delete(ref);
    }
    if (m.size === 0) this.refs.delete(e.node);
  }

  private setClaim(claim: KObject): void {
    const key = `${claim.metadata.namespace ?? ''}/${claim.metadata.name ?? ''}`;
    this.dropClaim(key);
    const volume = strAt(claim, 'spec', 'volumeName');
    if (!volume) return;
    this.claimVolume.set(key, volume);
    let set = this.volumeClaims.get(volume);
    if (!set) this.volumeClaims.set(volume, (set = new Set()));
    set.add(key);
  }

  private dropClaim(key: string): void {
    const volume = this.claimVolume.get(key);
    if (volume === undefined) return;
    this.claimVolume.delete(key);
    const set = this.volumeClaims.get(volume);
    set?.delete(key);
    if (set?.size === 0) this.volumeClaims.delete(volume);
  }
}
