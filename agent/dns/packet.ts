/**
 * dns-packet helpers: the decoded header fields its typings leave out (rcode, opcode), the header
 * flags word of a response (dns-packet encodes rcode and opcode only from `flags`), and the
 * encoding of a response that must fit a UDP payload (TC set and the record sections emptied when
 * it does not, RFC 1035 4.2.1 / RFC 2181 9, so the client asks again over TCP).
 */
import * as dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Packet } from 'dns-packet';

export type Rcode = 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED';
const RCODES: Record<string, number> = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 };

export interface Decoded extends DecodedPacket {
  rcode: string;
  opcode: string;
}

/** The largest UDP answer without EDNS (RFC 1035). */
export const CLASSIC_UDP_SIZE = 512;
/** The largest UDP payload svc-node answers with whatever the client advertises (DNS flag day 2020's 1232). */
export const MAX_UDP_SIZE = 1232;

export function decode(buf: Buffer): Decoded {
  return dnsPacket.decode(buf) as Decoded;
}

export function rcodeNumber(rcode: string): number {
  return RCODES[rcode] ?? 2;
}

export interface ResponseParts {
  rcode: string;
  answers?: Answer[];
  authorities?: Answer[];
  additionals?: Answer[];
  authoritative?: boolean;
  /** RA: the server recurses (forwards) for this client. */
  recursionAvailable?: boolean;
}

/** A response to `query` (id, question, RD and CD echoed). */
export function response(query: Pick<Decoded, 'id' | 'flags' | 'questions'>, parts: ResponseParts): Packet {
  let flags = rcodeNumber(parts.rcode);
  flags |= (query.flags ?? 0) & (dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED);
  if (parts.authoritative) flags |= dnsPacket.AUTHORITATIVE_ANSWER;
  if (parts.recursionAvailable) flags |= dnsPacket.RECURSION_AVAILABLE;
  return {
    type: 'response',
    id: query.id,
    flags,
    questions: query.questions,
    answers: parts.answers ?? [],
    authorities: parts.authorities ?? [],
    additionals: parts.additionals ?? [],
  };
}

/** The UDP payload size a query advertises in its OPT record (EDNS0), capped; 512 without one. */
export function udpLimit(query: Packet): number {
  const opt = (query.additionals ?? []).find((r) => r.type === 'OPT');
  if (!opt || opt.type !== 'OPT') return CLASSIC_UDP_SIZE;
  return Math.max(CLASSIC_UDP_SIZE, Math.min(MAX_UDP_SIZE, opt.udpPayloadSize));
}

/** Encodes a UDP response; one larger than `limit` goes out truncated (TC, question only). */
export function encodeForUdp(p: Packet, limit: number): { buf: Buffer; truncated: boolean } {
  const buf = dnsPacket.encode(p);
  if (buf.length <= limit) return { buf, truncated: false };
  const cut: Packet = { ...p, flags: (p.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE, answers: [], authorities: [], additionals: [] };
  return { buf: dnsPacket.encode(cut), truncated: true };
}

/** A minimal error response from a query's raw bytes when it cannot be decoded (id and opcode kept; FORMERR). */
export function formErr(raw: Buffer): Buffer | undefined {
  if (raw.length < 12) return undefined;
  const out = Buffer.alloc(12);
  out.writeUInt16BE(raw.readUInt16BE(0), 0);
  out.writeUInt16BE(0x8000 | (raw.readUInt16BE(2) & 0x7900) | RCODES.FORMERR, 2);
  return out;
}
