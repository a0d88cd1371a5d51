/**
 * One DNS query to one response: names in the cluster domain (and reverse names of cluster
 * addresses) are answered from the informers' records, authoritatively (AA), with the zone's SOA
 * in the authority section of NXDOMAIN and NODATA answers; everything else goes to the cache, then
 * the node's resolvers. A name in the cluster domain is never forwarded, whatever the records say
 * (NodeLocal DNS sends it to the cluster's CoreDNS instead; here this server is the cluster DNS).
 * An upstream failure is SERVFAIL. Only standard queries with one question are served (NOTIMP for
 * other opcodes, FORMERR for zero or several questions, as most servers do).
 */
import type { Answer, Question } from 'dns-packet';
import { AnswerCache, cacheKey, type CachedAnswer } from './answer-cache';
import type { ClusterZone, ZoneAnswer } from './cluster-zone';
import { UpstreamError, UpstreamLimitError } from './forwarder';
import { canonical, inZone } from './names';
import { response, type Decoded } from './packet';
import { CLUSTER_GENERATION, type MarkedPacket } from './wire-cache';
import type { Packet } from 'dns-packet';

/** The upstream side: the forwarder (contract: resolves the upstreams' answer or rejects UpstreamError). */
export interface UpstreamResolver {
  resolve(q: Question): Promise<CachedAnswer>;
}

/** Counters of what the handler did (the agent's metrics read them). */
export interface QueryCounters {
  cluster: number;
  forwarded: number;
  cacheHits: number;
  servfail: number;
  /** Forwarded questions refused because too many were upstream at once. */
  refused: number;
}

export class QueryHandler {
  readonly counters: QueryCounters = { cluster: 0, forwarded: 0, cacheHits: 0, servfail: 0, refused: 0 };

  constructor(
    private readonly zone: ClusterZone,
    private readonly upstream: UpstreamResolver,
    private readonly cache: AnswerCache,
    private readonly onUpstreamError: (err: Error, q: Question) => void = () => {},
  ) {}

  async handle(query: Decoded): Promise<Packet> {
    if (query.opcode !== 'QUERY') return response(query, { rcode: 'NOTIMP' });
    if (query.type !== 'query' || (query.questions ?? []).length !== 1) return response(query, { rcode: 'FORMERR' });
    const q = query.questions![0];
    const generation = this.zone.generation;
    const ours = this.zone.answer(q.name, q.type);
    if (ours) {
      this.counters.cluster++;
      const res: MarkedPacket = response(query, await this.clusterParts(ours, q));
      // From the records alone (no ExternalName target resolved upstream): the same bytes answer the same query until the records change.
      if (!ours.chase) res[CLUSTER_GENERATION] = generation;
      return res;
    }
    if (inZone(canonical(q.name), this.zone.domain)) return response(query, { rcode: 'REFUSED' });
    try {
      const a = await this.forward(q);
      return response(query, { ...a, recursionAvailable: true });
    } catch (e) {
      if (!(e instanceof UpstreamError)) throw e;
      if (e instanceof UpstreamLimitError) {
        this.counters.refused++;
        return response(query, { rcode: 'REFUSED', recursionAvailable: true });
      }
      this.counters.servfail++;
      this.onUpstreamError(e, q);
      return response(query, { rcode: 'SERVFAIL', recursionAvailable: true });
    }
  }

  /** A cached answer, else the upstreams' (cached for next time). */
  private async forward(q: Question): Promise<CachedAnswer> {
    const key = cacheKey(q.name, q.type, q.class);
    const hit = this.cache.get(key);
    if (hit) {
      this.counters.cacheHits++;
      return hit;
    }
    this.counters.forwarded++;
    const a = await this.upstream.resolve(q);
    this.cache.put(key, a);
    return a;
  }

  private async clusterParts(a: ZoneAnswer, q: Question) {
    const answers: Answer[] = [...a.answers];
    let rcode: string = a.rcode;
    // An ExternalName's target: resolved here (the answer carries the CNAME and the target's
    // records, as CoreDNS's kubernetes plugin does through its upstream), once (no CNAME chains
    // between services are followed further).
    if (a.chase) {
      const inner = this.zone.answer(a.chase, q.type);
      if (inner) answers.push(...inner.answers);
      else if (!inZone(a.chase, this.zone.domain)) {
        try {
          const up = await this.forward({ name: a.chase, type: q.type, class: q.class ?? 'IN' });
          answers.push(...up.answers);
          if (up.rcode === 'NXDOMAIN') rcode = 'NXDOMAIN';
        } catch (e) {
          if (!(e instanceof UpstreamError)) throw e;
          // The CNAME alone: the client's resolver may still follow it.
        }
      }
    }
    const negative = rcode === 'NXDOMAIN' || answers.length === 0;
    return {
      rcode,
      answers,
      authorities: negative ? [this.zone.soa(a.zone)] : [],
      additionals: a.additionals,
      authoritative: true,
      recursionAvailable: true,
    };
  }
}
