/**
 * Mirror pods: the API objects that make static pods visible (upstream's kubelet mirror client).
 * For each static pod there must be a pod of the same namespace and name whose annotation
 * svc.io/config.mirror equals the static pod's hash, owned by the Node; a mirror with another hash
 * (the manifest changed), one being deleted by a user, and one whose static pod is gone are
 * deleted, and missing ones are created. Static pods cannot be deleted through the API: a deleted
 * mirror pod comes back.
 *
 * Deletion: upstream deletes mirror pods with gracePeriodSeconds=0. The agent's API client cannot
 * send DeleteOptions yet, so a mirror pod that is not in a terminal phase first gets phase Failed
 * on its status; the server then deletes it without a grace period.
 */
import type { ApiClient } from '../client/api-client';
import { ClientError } from '../client/client-error';
import type { Log } from '../platform/logger';
import { podsResource } from './config-objects';
import type { Pod } from '../api/core-v1';
import { CONFIG_HASH, CONFIG_SOURCE } from './static-pod-source';
import { MIRROR_POD_ANNOTATION } from '../../apiserver/api/well-known';

export interface MirrorPodsOptions {
  client: ApiClient;
  nodeName: string;
  /** The Node's UID for the owner reference, when known. */
  nodeUid: () => string | undefined;
  log: Log;
  requestTimeoutMs?: number;
}

function key(p: Pod): string {
  return `${p.metadata.namespace ?? 'default'}/${p.metadata.name ?? ''}`;
}

/**
 * The mirror pod object for a static pod (no uid, no status: the server assigns them), controlled
 * by the Node: NodeRestriction refuses a mirror pod without that owner reference and the Node's uid.
 */
export function mirrorPodFor(pod: Pod, nodeName: string, nodeUid: string): Pod {
  const annotations = { ...(pod.metadata.annotations ?? {}) };
  const hash = annotations[CONFIG_HASH] ?? pod.metadata.uid ?? '';
  delete annotations[CONFIG_HASH];
  annotations[CONFIG_SOURCE] = 'file';
  annotations[MIRROR_POD_ANNOTATION] = hash;
  const mirror: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? 'default', annotations },
    spec: structuredClone(pod.spec),
  };
  if (pod.metadata.labels) mirror.metadata.labels = { ...pod.metadata.labels };
  mirror.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid, controller: true }];
  return mirror;
}

export class MirrorPods {
  constructor(private readonly o: MirrorPodsOptions) {}

  private opts(namespace: string, signal?: AbortSignal) {
    return { namespace, timeoutMs: this.o.requestTimeoutMs ?? 10_000, ...(signal ? { signal } : {}) };
  }

  /**
   * Makes the mirror pods match the static pods. `mirrors` are the API's mirror pods on this node.
   * Resolves the number of changes made; rejects ClientError on API failures (the caller retries).
   */
  async reconcile(staticPods: readonly Pod[], mirrors: readonly Pod[], signal?: AbortSignal): Promise<number> {
    let changes = 0;
    const wanted = new Map(staticPods.map((p) => [key(p), p]));
    const have = new Map<string, Pod>();
    for (const m of mirrors) {
      const s = wanted.get(key(m));
      const ok = s !== undefined && m.metadata.annotations?.[MIRROR_POD_ANNOTATION] === (s.metadata.annotations?.[CONFIG_HASH] ?? s.metadata.uid) && !m.metadata.deletionTimestamp;
      if (ok) {
        have.set(key(m), m);
        continue;
      }
      await this.deleteMirror(m, signal);
      changes++;
    }
    // As the kubelet's mirror client: no mirror pod before the Node's uid is known (the Node is
    // not registered yet); the next round creates them.
    const nodeUid = this.o.nodeUid();
    for (const [k, s] of wanted) {
      if (have.has(k) || !nodeUid) continue;
      try {
        await this.o.client.create(podsResource, mirrorPodFor(s, this.o.nodeName, nodeUid), this.opts(s.metadata.namespace ?? 'default', signal));
        this.o.log.info({ pod: k }, 'created mirror pod');
        changes++;
      } catch (e) {
        // The old mirror is still terminating, or another writer was first: the next round settles it.
        if (e instanceof ClientError && e.status === 409) continue;
        throw e;
      }
    }
    return changes;
  }

  private async deleteMirror(m: Pod, signal?: AbortSignal): Promise<void> {
    const ns = m.metadata.namespace ?? 'default';
    const name = m.metadata.name ?? '';
    try {
      const phase = m.status?.phase;
      if (phase !== 'Succeeded' && phase !== 'Failed') {
        await this.o.client.patch(podsResource, name, 'merge', { metadata: { uid: m.metadata.uid }, status: { phase: 'Failed' } }, { ...this.opts(ns, signal), subresource: 'status' });
      }
      const cur = await this.o.client.get(podsResource, name, this.opts(ns, signal));
      if (cur.metadata.uid !== m.metadata.uid) return;
      await this.o.client.delete(podsResource, name, this.opts(ns, signal));
      this.o.log.info({ pod: `${ns}/${name}` }, 'deleted mirror pod');
    } catch (e) {
      if (e instanceof ClientError && (e.status === 404 || e.status === 422 || e.status === 409)) return;
      throw e;
    }
  }
}
