/**
 * Forwards a question to the node's resolvers (the nameservers of the host's resolv.conf): UDP
 * first with a per-try deadline, again over TCP when the answer comes back truncated, the next
 * nameserver after a timeout, an error, SERVFAIL or REFUSED (glibc's resolver order; CoreDNS's
 * forward plugin picks randomly). Identical questions in flight share one upstream query. Answers
 * are matched by id, source address and question, so a stray or spoofed datagram is ignored. When
 * no nameserver answers, resolve rejects UpstreamError and the server answers SERVFAIL. At most
 * maxConcurrent distinct questions are upstream at once (each holds a socket); past that a question
 * is refused at once (UpstreamLimitError, answered REFUSED as CoreDNS's forward max_concurrent),
 * so a flood of unique names cannot exhaust the node's sockets.
 */
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import net from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Question } from 'dns-packet';
import { cacheKey, type CachedAnswer } from './answer-cache';
import { decode, type Decoded } from './packet';

export interface Upstream {
  address: string;
  port: number;
}

export class UpstreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/** Too many questions upstream at once: the query is answered REFUSED. */
export class UpstreamLimitError extends UpstreamError {
  constructor(limit: number) {
    super(`more than ${limit} questions are being forwarded at once`);
    this.name = 'UpstreamLimitError';
  }
}

export interface ForwarderOptions {
  upstreams: readonly Upstream[];
  /** Deadline of one try against one nameserver (UDP, or the TCP retry), ms. */
  timeoutMs: number;
  /** Distinct questions upstream at once (default 1000). */
  maxConcurrent?: number;
}

const sameQuestion = (a: Question | undefined, b: Question) => !!a && a.name.toLowerCase() === b.name.toLowerCase() && a.type === b.type && (a.class ?? 'IN') === (b.class ?? 'IN');

export class Forwarder {
  private readonly inflight = new Map<string, Promise<CachedAnswer>>();
  /** Upstream queries sent (UDP and TCP), for tests and metrics. */
  sent = 0;

  constructor(private readonly o: ForwarderOptions) {}

  /** The upstreams' answer to one question (recursion desired). Rejects UpstreamError. */
  resolve(q: Question): Promise<CachedAnswer> {
    const key = cacheKey(q.name, q.type, q.class);
    let p = this.inflight.get(key);
    if (!p) {
      const limit = this.o.maxConcurrent ?? 1000;
      if (this.inflight.size >= limit) return Promise.reject(new UpstreamLimitError(limit));
      p = this.tryAll(q).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  private async tryAll(q: Question): Promise<CachedAnswer> {
    if (this.o.upstreams.length === 0) throw new UpstreamError('no upstream nameservers (the node resolv.conf lists none)');
    const problems: string[] = [];
    let failed: CachedAnswer | undefined;
    for (const u of this.o.upstreams) {
      try {
        let r = await this.udp(u, q);
        if (r.flag_tc) r = await this.tcp(u, q);
        const answer: CachedAnswer = { rcode: r.rcode, answers: r.answers ?? [], authorities: r.authorities ?? [], additionals: (r.additionals ?? []).filter((x) => x.type !== 'OPT') };
        if (r.rcode === 'SERVFAIL' || r.rcode === 'REFUSED') {
          failed ??= answer;
          problems.push(`${u.address}:${u.port} answered ${r.rcode}`);
          continue;
        }
        return answer;
      } catch (e) {
        problems.push(`${u.address}:${u.port}: ${(e as Error).message}`);
      }
    }
    if (failed) return failed;
    throw new UpstreamError(`no upstream nameserver answered ${q.name} ${q.type}: ${problems.join('; ')}`);
  }

  private query(q: Question): { id: number; buf: Buffer } {
    const id = randomInt(0, 65536);
    this.sent++;
    return { id, buf: dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name: q.name, type: q.type, class: q.class ?? 'IN' }] }) };
  }

  private udp(u: Upstream, q: Question): Promise<Decoded> {
    const { id, buf } = this.query(q);
    const sock = dgram.createSocket(isIPv6(u.address) ? 'udp6' : 'udp4');
    return new Promise<Decoded>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`timed out after ${this.o.timeoutMs} ms`)), this.o.timeoutMs);
      const done = (err: Error | undefined, r?: Decoded) => {
        clearTimeout(timer);
        sock.close();
        if (err) reject(err);
        else resolve(r!);
      };
      sock.on('error', (e) => done(e));
      sock.on('message', (msg, rinfo) => {
        if (rinfo.port !== u.port || rinfo.address !== u.address) return;
        let r: Decoded;
        try {
          r = decode(msg);
        } catch {
          return;
        }
        if (r.id === id && r.type === 'response' && sameQuestion(r.questions?.[0], q)) done(undefined, r);
      });
      sock.send(buf, u.port, u.address, (e) => {
        if (e) done(e);
      });
    });
  }

  private tcp(u: Upstream, q: Question): Promise<Decoded> {
    const { id, buf } = this.query(q);
    return new Promise<Decoded>((resolve, reject) => {
      const sock = net.connect({ host: u.address, port: u.port });
      let acc = Buffer.alloc(0);
      const timer = setTimeout(() => done(new Error(`TCP retry timed out after ${this.o.timeoutMs} ms`)), this.o.timeoutMs);
      const done = (err: Error | undefined, r?: Decoded) => {
        clearTimeout(timer);
        sock.destroy();
        if (err) reject(err);
        else resolve(r!);
      };
      sock.on('error', (e) => done(e));
      sock.on('connect', () => {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(buf.length);
        sock.write(Buffer.concat([len, buf]));
      });
      sock.on('data', (chunk) => {
        acc = Buffer.concat([acc, chunk]);
        if (acc.length < 2 || acc.length < 2 + acc.readUInt16BE(0)) return;
        try {
          const r = decode(acc.subarray(2, 2 + acc.readUInt16BE(0)));
          if (r.id !== id || !sameQuestion(r.questions?.[0], q)) done(new Error('TCP answer does not match the question'));
          else done(undefined, r);
        } catch (e) {
          done(e as Error);
        }
      });
      sock.on('end', () => done(new Error('connection closed before a whole answer')));
    });
  }
}
