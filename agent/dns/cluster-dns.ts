/**
 * svc-node's cluster DNS server, NodeLocal-DNS style: one per node, inside svc-node, listening on
 * a node-local address (dns.listenAddress, else the first clusterDNS address) that pods get as
 * their nameserver. Chosen over a central server so a node's pods resolve through their own node
 * (no extra hop, no cluster Service to route to before the proxy runs) and the agent's existing
 * API connection feeds it. Unlike NodeLocal DNS, which caches in front of the cluster's CoreDNS,
 * this server is the cluster DNS itself: it follows Services and EndpointSlices with informers
 * over the agent's API client and answers the cluster domain from them (cluster-zone.ts), and
 * forwards everything else to the node's resolvers (resolvConf) through a cache.
 * The listeners open once both informers have synced, so no pod ever gets an NXDOMAIN for a
 * Service that exists but was not listed yet. With dns.pods "verified" a third informer follows
 * every pod of the cluster (reduced to its namespace, name and status.podIP) and is waited for too.
 */
import { Informer } from '../../common/informer/informer';
import type { ApiClient } from '../client/api-client';
import { apiListWatch, timersFromSleep } from '../client/list-watch';
import type { ResourceRef } from '../client/resources';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { AnswerCache, type CacheLimits } from './answer-cache';
import { ClusterRecords } from './cluster-records';
import { ClusterZone, type PodMode } from './cluster-zone';
import { DnsServer } from './dns-server';
import { Forwarder, type Upstream } from './forwarder';
import type { ListenInterface } from './listen-interface';
import { canonical } from './names';
import { PodIPs, podSummary, type PodAddress } from './pod-ips';
import { QueryHandler } from './query-handler';
import type { EndpointSlice, Service } from './wire-types';
import { WireCache } from './wire-cache';

export const servicesResource: ResourceRef = { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true };
export const endpointSlicesResource: ResourceRef = { group: 'discovery.svc.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true };
export const podsResource: ResourceRef = { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true };

export interface ClusterDnsOptions {
  client: ApiClient;
  clock: Clock;
  log: Log;
  /** clusterDomain, e.g. "cluster.local". */
  domain: string;
  listen: { address: string; port: number };
  /** The node's nameservers (resolvConf), port 53 unless a test says otherwise. */
  upstreams: readonly Upstream[];
  upstreamTimeoutMs: number;
  cache: CacheLimits;
  /** A dummy interface to hold the listen address (dns.interfaceName); unset: the address is already on the node. */
  listenInterface?: ListenInterface;
  /** Pod records (dns.pods, CoreDNS's `pods` option); default "insecure". */
  pods?: PodMode;
}

export class ClusterDns {
  readonly records: ClusterRecords;
  readonly handler: QueryHandler;
  readonly server: DnsServer;
  readonly cache: AnswerCache;
  private readonly services: Informer<Service>;
  private readonly slices: Informer<EndpointSlice>;
  /** Every pod of the cluster, only with dns.pods "verified". */
  private readonly pods: Informer<PodAddress> | undefined;
  readonly podIPs = new PodIPs();
  private readonly iface: ListenInterface | undefined;

  constructor(o: ClusterDnsOptions) {
    this.iface = o.listenInterface;
    const domain = canonical(o.domain);
    const now = () => o.clock.now();
    this.records = new ClusterRecords(domain, now);
    const clock = timersFromSleep(o.clock);
    this.services = new Informer<Service>(apiListWatch<Service>(o.client, servicesResource), { name: 'services (dns)', clock, log: o.log, resumeAfterCleanEnd: true });
    this.slices = new Informer<EndpointSlice>(apiListWatch<EndpointSlice>(o.client, endpointSlicesResource), { name: 'endpointslices (dns)', clock, log: o.log, resumeAfterCleanEnd: true });
    const r = this.records;
    this.services.addEventHandler({ onAdd: (s) => r.upsertService(s), onUpdate: (_o, s) => r.upsertService(s), onDelete: (s) => r.deleteService(s) });
    this.slices.addEventHandler({ onAdd: (s) => r.upsertSlice(s), onUpdate: (_o, s) => r.upsertSlice(s), onDelete: (s) => r.deleteSlice(s) });
    const mode = o.pods ?? 'insecure';
    if (mode === 'verified') {
      this.pods = new Informer<PodAddress>(apiListWatch<PodAddress>(o.client, podsResource), { name: 'pods (dns)', clock, log: o.log, resumeAfterCleanEnd: true, transform: podSummary });
      const p = this.podIPs;
      this.pods.addEventHandler({ onAdd: (x) => p.upsert(x), onUpdate: (_o, x) => p.upsert(x), onDelete: (x) => p.delete(x) });
    }
    const upstreams = o.upstreams.filter((u) => !(u.address === o.listen.address && u.port === o.listen.port));
    if (upstreams.length < o.upstreams.length) o.log.warn({ listen: o.listen }, 'the node resolv.conf names the cluster DNS address itself: that nameserver is skipped (a forwarding loop)');
    const forwarder = new Forwarder({ upstreams, timeoutMs: o.upstreamTimeoutMs });
    this.cache = new AnswerCache(o.cache, now);
    const podIPs = this.podIPs;
    const podAnswers = { mode, exists: (ip: string, ns: string) => podIPs.has(ip, ns), get generation() { return podIPs.generation; } };
    const zone = new ClusterZone(this.records, domain, undefined, podAnswers);
    this.handler = new QueryHandler(zone, forwarder, this.cache, (err, q) =>
      o.log.warn({ name: q.name, type: q.type, error: err.message }, 'forwarded DNS query failed: SERVFAIL'),
    );
    const wireCache = new WireCache(() => zone.generation);
    this.server = new DnsServer({ address: o.listen.address, port: o.listen.port, handler: this.handler, log: o.log, wireCache });
  }

  /** Follows Services and EndpointSlices and, once both are listed, serves DNS until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const informers = Promise.all([this.services.run(signal), this.slices.run(signal), this.pods?.run(signal)]);
    const synced = (await this.services.whenSynced(signal)) && (await this.slices.whenSynced(signal)) && (!this.pods || (await this.pods.whenSynced(signal)));
    if (synced && !signal.aborted) {
      await this.iface?.ensure();
      try {
        await this.server.run(signal);
      } finally {
        await this.iface?.remove();
      }
    }
    await informers;
  }
}
