/**
 * The DNS listeners: UDP and TCP on one address and port (RFC 7766: a server must serve both).
 * UDP answers larger than the client's payload size (512, or its EDNS0 size up to 1232) go out
 * truncated (TC) so the client asks again over TCP. TCP carries length-prefixed messages, several
 * per connection, answered in order; a connection idle for idleTimeoutMs is closed, and at most
 * maxConnections are open at once (more are refused by closing them). Port 0 binds UDP to a free
 * port and TCP to the same one (tests).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import * as dnsPacket from 'dns-packet';
import { decode, encodeForUdp, formErr, response, udpLimit, type Decoded } from './packet';
import type { Packet } from 'dns-packet';
import type { WireCache } from './wire-cache';

/** Answers one decoded query (QueryHandler). */
export interface DnsQueryHandler {
  handle(query: Decoded): Promise<Packet>;
}

export interface DnsServerOptions {
  address: string;
  port: number;
  handler: DnsQueryHandler;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  idleTimeoutMs?: number;
  maxConnections?: number;
  /** Encoded cluster answers of repeated UDP queries (wire-cache.ts); none: every query is decoded and answered. */
  wireCache?: WireCache;
}

export class DnsServer {
  private readonly bound: Promise<{ address: string; port: number }>;
  private resolveBound!: (a: { address: string; port: number }) => void;
  private rejectBound!: (e: Error) => void;
  /** UDP answers sent truncated (for tests and metrics). */
  truncated = 0;
  /** UDP answers copied from the wire cache. */
  wireHits = 0;

  constructor(private readonly o: DnsServerOptions) {
    this.bound = new Promise((resolve, reject) => {
      this.resolveBound = resolve;
      this.rejectBound = reject;
    });
    this.bound.catch(() => {});
  }

  /** The address and port once both listeners are bound; rejects if binding failed. */
  listening(): Promise<{ address: string; port: number }> {
    return this.bound;
  }

  /** Binds both listeners and serves until the signal aborts; rejects when binding fails. */
  async run(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    let udp: dgram.Socket | undefined;
    let tcp: net.Server | undefined;
    const sockets = new Set<net.Socket>();
    try {
      for (let tries = 0; ; tries++) {
        udp = await this.bindUdp(this.o.port);
        const port = udp.address().port;
        try {
          tcp = await this.bindTcp(port, sockets);
          break;
        } catch (e) {
          udp.close();
          if (this.o.port !== 0 || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || tries >= 10) throw e;
        }
      }
    } catch (e) {
      this.rejectBound(e as Error);
      throw e;
    }
    this.resolveBound({ address: this.o.address, port: udp.address().port });
    this.o.log.info({ address: this.o.address, port: udp.address().port }, 'cluster DNS listening (UDP and TCP)');
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    udp.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
  }

  private bindUdp(port: number): Promise<dgram.Socket> {
    const sock = dgram.createSocket(net.isIPv6(this.o.address) ? 'udp6' : 'udp4');
    sock.on('message', (msg, rinfo) => void this.onDatagram(sock, msg, rinfo));
    return new Promise((resolve, reject) => {
      sock.once('error', reject);
      sock.bind(port, this.o.address, () => {
        sock.off('error', reject);
        sock.on('error', (err) => this.o.log.warn({ err }, 'DNS UDP socket error'));
        resolve(sock);
      });
    });
  }

  private async onDatagram(sock: dgram.Socket, msg: Buffer, rinfo: dgram.RemoteInfo): Promise<void> {
    const hit = this.o.wireCache?.get(msg);
    if (hit) {
      this.wireHits++;
      sock.send(hit, rinfo.port, rinfo.address);
      return;
    }
    let query: Decoded;
    try {
      query = decode(msg);
    } catch {
      const err = formErr(msg);
      if (err) sock.send(err, rinfo.port, rinfo.address);
      return;
    }
    if (query.type !== 'query') return; // never answer an answer (reflection loops)
    const res = await this.answer(query);
    const { buf, truncated } = encodeForUdp(res, udpLimit(query));
    if (truncated) this.truncated++;
    this.o.wireCache?.put(msg, res, buf);
    sock.send(buf, rinfo.port, rinfo.address);
  }

  private bindTcp(port: number, sockets: Set<net.Socket>): Promise<net.Server> {
    const server = net.createServer((s) => {
      if (sockets.size >= (this.o.maxConnections ?? 256)) {
        s.destroy();
        return;
      }
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      this.serveTcp(s);
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host: this.o.address }, () => {
        server.off('error', reject);
        resolve(server);
      });
    });
  }

  private serveTcp(s: net.Socket): void {
    s.setTimeout(this.o.idleTimeoutMs ?? 10_000, () => s.destroy());
    s.on('error', () => s.destroy());
    let acc = Buffer.alloc(0);
    let chain = Promise.resolve();
    s.on('data', (chunk) => {
      acc = acc.length === 0 ? chunk : Buffer.concat([acc, chunk]);
      while (acc.length >= 2 && acc.length >= 2 + acc.readUInt16BE(0)) {
        const msg = acc.subarray(2, 2 + acc.readUInt16BE(0));
        acc = acc.subarray(2 + msg.length);
        // Answers go out in the order of the queries (one chain per connection).
        chain = chain.then(() => this.answerTcp(s, msg));
      }
    });
  }

  private async answerTcp(s: net.Socket, msg: Buffer): Promise<void> {
    let query: Decoded | undefined;
    try {
      query = decode(msg);
    } catch {
      // not a DNS message: FORMERR when a header is there, else the connection is dropped
    }
    if (query?.type === 'response') return;
    const out = query ? dnsPacket.encode(await this.answer(query)) : formErr(msg);
    if (!out) {
      s.destroy();
      return;
    }
    if (s.destroyed) return;
    const len = Buffer.alloc(2);
    len.writeUInt16BE(out.length);
    s.write(Buffer.concat([len, out]));
  }

  /** The handler's answer; SERVFAIL (and a log line) when it fails unexpectedly. */
  private async answer(query: Decoded): Promise<Packet> {
    try {
      return await this.o.handler.handle(query);
    } catch (err) {
      this.o.log.warn({ err, question: query.questions?.[0] }, 'DNS query failed');
      return response(query, { rcode: 'SERVFAIL' });
    }
  }
}
