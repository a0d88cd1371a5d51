import { createHash } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isConflict, isNotFound } from '../api/errors';
import { parseLabelSelector } from '../api/selectors';
import type { KObject } from '../api/types';
import { get, recs, str } from '../registry/obj-access';
import type { ResourceType } from '../registry/resource-type';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';
import { rfc3339Micro } from './time';

const ctx = controllerContext('kube-apiserver');
/** Upstream's label on API server identity leases; the reconciler lists the leases by it. */
export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity';
/** The address and port a lease's API server serves on (the endpoint it contributes). */
export const ADDRESS_ANNOTATION = 'svc.io/apiserver-endpoint';
const LEASE_NAMESPACE = 'svc-system';

export interface KubernetesServiceOptions {
  /** This API server's address for the endpoints (--advertise-address, else the bind address, else the host's). */
  address: string;
  /** The secure port the service's 443 reaches. */
  port: number;
  /** The first address of the primary service CIDR: the kubernetes Service's cluster IP, as upstream. */
  clusterIP: string;
  leaseDurationMs?: number;
  renewIntervalMs?: number;
  now: () => Date;
  log: Logger;
  sleep?: (ms: number, signal: AbortSignal) => Promise<unknown>;
}

/**
 * The `kubernetes` Service in `default` and its Endpoints (upstream's master endpoint reconciler,
 * the lease flavour, run on every API server): each server keeps a Lease svc-system/apiserver-<hash
 * of its endpoint> renewed (labelled as upstream's identity leases) and writes the Endpoints from
 * the unexpired leases, so several replicas are all listed and a stopped one drops out when its
 * lease expires; a clean stop deletes its own lease and address at once. The Service (ClusterIP the
 * first address of the range, port https 443 → the secure port) is created or put back when
 * changed. Differs: upstream keeps the leases as etcd keys with a TTL (/masterleases/); no
 * EndpointSlice is written here yet.
 */
export class KubernetesServiceReconciler {
  private readonly leaseName: string;

  constructor(
    private readonly store: ObjectStore,
    private readonly types: { services: ResourceType; endpoints: ResourceType; leases: ResourceType },
    private readonly o: KubernetesServiceOptions,
  ) {
    this.leaseName = `apiserver-${createHash('sha256').update(`${o.address}:${o.port}`).digest('hex').slice(0, 16)}`;
  }

  async run(signal: AbortSignal): Promise<void> {
    const sleep = this.o.sleep ?? ((ms: number, s: AbortSignal) => sleepFor(ms, undefined, { signal: s }));
    while (!signal.aborted) {
      try {
        await this.reconcile();
      } catch (err) {
        this.o.log.warn({ err }, 'reconciling the kubernetes service failed; retrying');
      }
      try {
        await sleep(this.o.renewIntervalMs ?? 10_000, signal);
      } catch {
        break;
      }
    }
    await this.stop().catch((err: unknown) => this.o.log.warn({ err }, 'removing this server from the kubernetes endpoints failed'));
  }

  /** One pass: renew this server's lease, put back the Service, write the Endpoints from the live leases. */
  async reconcile(): Promise<void> {
    await this.renewLease();
    await this.ensureService();
    await this.writeEndpoints(await this.liveEndpoints());
  }

  /** This server leaves: its lease is deleted and the Endpoints written without it. */
  async stop(): Promise<void> {
    await this.store.delete(this.types.leases, LEASE_NAMESPACE, this.leaseName, {}, ctx).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    const others = (await this.liveEndpoints()).filter((e) => e !== `${this.o.address}:${this.o.port}`);
    await this.writeEndpoints(others);
  }

  private async renewLease(): Promise<void> {
    const durationS = Math.ceil((this.o.leaseDurationMs ?? 15_000) / 1000) * 3; // upstream: three renewals before an endpoint expires
    const lease = (cur: KObject | null): KObject => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      ...(cur ?? {}),
      metadata: {
        ...(cur?.metadata ?? {}),
        name: this.leaseName,
        namespace: LEASE_NAMESPACE,
        labels: { ...(cur?.metadata.labels ?? {}), [IDENTITY_LABEL]: 'kube-apiserver' },
        annotations: { ...(cur?.metadata.annotations ?? {}), [ADDRESS_ANNOTATION]: `${this.o.address}:${this.o.port}` },
      },
      spec: { holderIdentity: this.leaseName, leaseDurationSeconds: durationS, renewTime: rfc3339Micro(this.o.now()) },
    });
    await this.store.update(this.types.leases, LEASE_NAMESPACE, this.leaseName, (cur) => lease(cur), ctx, true);
  }

  /** "address:port" of every API server whose lease has not expired. */
  private async liveEndpoints(): Promise<string[]> {
    const list = await this.store.list(this.types.leases, LEASE_NAMESPACE, { labelSelector: parseLabelSelector(IDENTITY_LABEL), fieldSelector: [] });
    const now = this.o.now().getTime();
    const out = new Set<string>();
    for (const l of list.items) {
      const ep = l.metadata.annotations?.[ADDRESS_ANNOTATION];
      const renew = Date.parse(str(get(l, 'spec', 'renewTime')) ?? '');
      const dur = Number(get(l, 'spec', 'leaseDurationSeconds') ?? 0) * 1000;
      if (ep && Number.isFinite(renew) && renew + dur > now) out.add(ep);
    }
    return [...out].sort();
  }

  private async ensureService(): Promise<void> {
    const port = { name: 'https', protocol: 'TCP', port: 443, targetPort: this.o.port };
    try {
      await this.store.update(
        this.types.services,
        'default',
        'kubernetes',
        (cur): KObject => {
          if (cur) {
            const p = recs(get(cur, 'spec', 'ports'));
            if (p.length === 1 && p[0].port === 443 && p[0].targetPort === this.o.port && p[0].name === 'https') return cur;
            return { ...cur, spec: { ...(cur.spec as object), ports: [port] } };
          }
          return {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
            spec: { type: 'ClusterIP', clusterIP: this.o.clusterIP, ports: [port], sessionAffinity: 'None' },
          };
        },
        ctx,
        true,
      );
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }

  private async writeEndpoints(endpoints: string[]): Promise<void> {
    const addresses = endpoints.map((e) => e.slice(0, e.lastIndexOf(':'))).map((ip) => ({ ip }));
    const subsets = addresses.length ? [{ addresses, ports: [{ name: 'https', port: this.o.port, protocol: 'TCP' }] }] : [];
    await this.store.update(
      this.types.endpoints,
      'default',
      'kubernetes',
      (cur): KObject => {
        if (cur && JSON.stringify(cur.subsets ?? []) === JSON.stringify(subsets)) return cur;
        return { apiVersion: 'v1', kind: 'Endpoints', ...(cur ?? {}), metadata: { ...(cur?.metadata ?? {}), name: 'kubernetes', namespace: 'default' }, subsets };
      },
      ctx,
      true,
    );
  }
}
