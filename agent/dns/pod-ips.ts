/**
 * The pods' addresses by namespace, for "pods verified" (dns.pods: verified): CoreDNS's kubernetes
 * plugin answers <a-b-c-d>.<ns>.pod.<domain> then only when a pod in <ns> has that address as its
 * status.podIP (its primary address: CoreDNS indexes that one only), and it ignores pods being
 * deleted (a deletionTimestamp set). Fed by a Pod informer over every pod of the cluster (the node
 * may list and watch them: system:svc-node-network-policy); writes from its handlers, reads from
 * the query path, both synchronous.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { KObject } from '../../apiserver/api/types';
import { canonicalIP } from './names';

/** The parts of a core/v1 Pod this index reads (podSummary keeps only these). */
export interface PodAddress extends KObject {
  status?: { podIP?: string };
}

/** A pod reduced to what the index reads, so the informer's cache holds little per pod. */
export function podSummary(p: PodAddress): PodAddress {
  const m = p.metadata;
  return {
    apiVersion: p.apiVersion,
    kind: p.kind,
    metadata: { namespace: m.namespace, name: m.name, uid: m.uid, resourceVersion: m.resourceVersion, ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}) },
    status: { ...(p.status?.podIP ? { podIP: p.status.podIP } : {}) },
  };
}

const keyOf = (p: PodAddress) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;

export class PodIPs {
  /** canonical address -> pod key -> namespace. */
  private readonly byIP = new Map<string, Map<string, string>>();
  /** pod key -> the address it is indexed under. */
  private readonly ipOf = new Map<string, string>();
  private changes = 0;

  /** Changes with every change of the index (so answers cached from it are dropped). */
  get generation(): number {
    return this.changes;
  }

  upsert(p: PodAddress): void {
    const key = keyOf(p);
    const raw = p.status?.podIP ?? '';
    const ip = !p.metadata.deletionTimestamp && (isIPv4(raw) || isIPv6(raw)) ? canonicalIP(raw) : undefined;
    const old = this.ipOf.get(key);
    if (old === ip) return;
    if (old !== undefined) this.remove(key, old);
    if (ip !== undefined) {
      let pods = this.byIP.get(ip);
      if (!pods) this.byIP.set(ip, (pods = new Map<string, string>()));
      pods.set(key, p.metadata.namespace ?? '');
      this.ipOf.set(key, ip);
    }
    this.changes++;
  }

  delete(p: PodAddress): void {
    const key = keyOf(p);
    const old = this.ipOf.get(key);
    if (old === undefined) return;
    this.remove(key, old);
    this.changes++;
  }

  /** Whether a pod in the namespace has this address (any spelling of it). */
  has(ip: string, namespace: string): boolean {
    const pods = this.byIP.get(canonicalIP(ip));
    if (!pods) return false;
    for (const ns of pods.values()) if (ns === namespace) return true;
    return false;
  }

  private remove(key: string, ip: string): void {
    this.ipOf.delete(key);
    const pods = this.byIP.get(ip);
    pods?.delete(key);
    if (pods?.size === 0) this.byIP.delete(ip);
  }
}
