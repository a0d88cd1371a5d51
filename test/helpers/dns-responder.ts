/**
 * A minimal DNS responder on loopback for tests and the dns bench: answers from a hosts-file-like
 * table (name -> IPv4 addresses), NXDOMAIN with an SOA for other names, over UDP and TCP on one
 * port. It counts the queries it gets, can stay silent (an upstream that times out), answer
 * SERVFAIL, and answers names in `truncate` with TC over UDP (the whole answer over TCP).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Answer, Packet } from 'dns-packet';

export interface ResponderOptions {
  hosts: Record<string, string[]>;
  ttl?: number;
  /** Names answered with TC over UDP. */
  truncate?: string[];
}

export class DnsResponder {
  queries = 0;
  /** Names asked, in order (lower case). */
  readonly asked: string[] = [];
  mode: 'answer' | 'silent' | 'servfail' = 'answer';
  private udp?: dgram.Socket;
  private tcp?: net.Server;
  private readonly conns = new Set<net.Socket>();
  port = 0;

  constructor(private readonly o: ResponderOptions) {}

  async start(): Promise<number> {
    for (let i = 0; i < 10; i++) {
      const udp = dgram.createSocket('udp4');
      await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', () => resolve()));
      const port = udp.address().port;
      const tcp = net.createServer((s) => this.serveTcp(s));
      const ok = await new Promise<boolean>((resolve) => {
        tcp.once('error', () => resolve(false));
        tcp.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (!ok) {
        udp.close();
        continue;
      }
      udp.on('message', (msg, r) => {
        const out = this.answer(msg, true);
        if (out) udp.send(out, r.port, r.address);
      });
      this.udp = udp;
      this.tcp = tcp;
      this.port = port;
      return port;
    }
    throw new Error('no free port for the DNS responder');
  }

  async stop(): Promise<void> {
    this.udp?.close();
    for (const c of this.conns) c.destroy();
    await new Promise<void>((resolve) => (this.tcp ? this.tcp.close(() => resolve()) : resolve()));
  }

  private serveTcp(s: net.Socket): void {
    this.conns.add(s);
    s.on('close', () => this.conns.delete(s));
    s.on('error', () => s.destroy());
    let acc = Buffer.alloc(0);
    s.on('data', (chunk) => {
      acc = Buffer.concat([acc, chunk]);
      while (acc.length >= 2 && acc.length >= 2 + acc.readUInt16BE(0)) {
        const msg = acc.subarray(2, 2 + acc.readUInt16BE(0));
        acc = acc.subarray(2 + msg.length);
        const out = this.answer(msg, false);
        if (!out) continue;
        const len = Buffer.alloc(2);
        len.writeUInt16BE(out.length);
        s.write(Buffer.concat([len, out]));
      }
    });
  }

  private answer(msg: Buffer, udp: boolean): Buffer | undefined {
    const q = dnsPacket.decode(msg);
    const question = q.questions?.[0];
    if (!question) return undefined;
    this.queries++;
    this.asked.push(question.name.toLowerCase());
    if (this.mode === 'silent') return undefined;
    const name = question.name.toLowerCase();
    const ttl = this.o.ttl ?? 300;
    const base: Packet = { type: 'response', id: q.id, flags: dnsPacket.RECURSION_AVAILABLE | dnsPacket.RECURSION_DESIRED, questions: q.questions };
    if (this.mode === 'servfail') return dnsPacket.encode({ ...base, flags: (base.flags ?? 0) | 2 });
    const ips = this.o.hosts[name];
    if (!ips) {
      const soa: Answer = { type: 'SOA', name: 'test', ttl, class: 'IN', data: { mname: 'ns.test', rname: 'hostmaster.test', serial: 1, refresh: 60, retry: 60, expire: 60, minimum: 30 } };
      return dnsPacket.encode({ ...base, flags: (base.flags ?? 0) | 3, authorities: [soa] });
    }
    if (udp && this.o.truncate?.includes(name)) return dnsPacket.encode({ ...base, flags: (base.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE });
    const answers: Answer[] = question.type === 'A' ? ips.map((ip) => ({ type: 'A', name: question.name, ttl, class: 'IN', data: ip })) : [];
    return dnsPacket.encode({ ...base, answers });
  }
}

/** One query over UDP to a loopback server; resolves the decoded answer (rejects after timeoutMs). */
export function queryUdp(port: number, name: string, type: string, opts: { timeoutMs?: number; address?: string; edns?: number } = {}): Promise<dnsPacket.DecodedPacket & { rcode: string }> {
  const sock = dgram.createSocket('udp4');
  const id = Math.floor(Math.random() * 65536);
  const additionals: Answer[] = opts.edns ? [{ type: 'OPT', name: '.', udpPayloadSize: opts.edns, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [];
  const buf = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: type as 'A', name, class: 'IN' }], additionals });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.close();
      reject(new Error(`no answer to ${name} ${type} in ${opts.timeoutMs ?? 5000} ms`));
    }, opts.timeoutMs ?? 5000);
    sock.on('message', (msg) => {
      const r = dnsPacket.decode(msg) as dnsPacket.DecodedPacket & { rcode: string };
      if (r.id !== id) return;
      clearTimeout(timer);
      sock.close();
      resolve(r);
    });
    sock.send(buf, port, opts.address ?? '127.0.0.1');
  });
}

/** Queries over one TCP connection (length-prefixed), answered in order. */
export function queryTcp(port: number, questions: { name: string; type: string }[], address = '127.0.0.1'): Promise<(dnsPacket.DecodedPacket & { rcode: string })[]> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: address });
    const out: (dnsPacket.DecodedPacket & { rcode: string })[] = [];
    let acc = Buffer.alloc(0);
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error('TCP queries timed out'));
    }, 5000);
    s.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    s.on('connect', () => {
      const msgs = questions.map((q, i) => {
        const m = dnsPacket.encode({ type: 'query', id: i + 1, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: q.type as 'A', name: q.name, class: 'IN' }] });
        const len = Buffer.alloc(2);
        len.writeUInt16BE(m.length);
        return Buffer.concat([len, m]);
      });
      s.write(Buffer.concat(msgs));
    });
    s.on('data', (chunk) => {
      acc = Buffer.concat([acc, chunk]);
      while (acc.length >= 2 && acc.length >= 2 + acc.readUInt16BE(0)) {
        out.push(dnsPacket.decode(acc.subarray(2, 2 + acc.readUInt16BE(0))) as dnsPacket.DecodedPacket & { rcode: string });
        acc = acc.subarray(2 + acc.readUInt16BE(0));
      }
      if (out.length === questions.length) {
        clearTimeout(timer);
        s.destroy();
        resolve(out);
      }
    });
  });
}
