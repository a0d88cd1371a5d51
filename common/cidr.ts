import { isIP } from 'node:net';

/** An IP family as the Service API names it. */
export type IpFamily = 'IPv4' | 'IPv6';

/** A parsed CIDR: the network address as a number, the prefix length, and the family's width. */
export interface Cidr {
  text: string;
  family: IpFamily;
  /** The network address (host bits cleared). */
  base: bigint;
  prefix: number;
  /** Addresses in the block (2^(width-prefix)). */
  size: bigint;
}

export function familyOf(ip: string): IpFamily | undefined {
  const v = isIP(ip);
  return v === 4 ? 'IPv4' : v === 6 ? 'IPv6' : undefined;
}

/** The address as a number; undefined when it is not an IP. */
export function ipToBig(ip: string): bigint | undefined {
  const v = isIP(ip);
  if (v === 4) return ip.split('.').reduce((n, o) => (n << 8n) | BigInt(Number(o)), 0n);
  if (v !== 6) return undefined;
  let text = ip;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = ipToBig(dotted[1])!;
    text = text.slice(0, -dotted[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const hs = head ? head.split(':') : [];
  const ts = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? hs : [...hs, ...Array<string>(8 - hs.length - ts.length).fill('0'), ...ts];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** The canonical text of an address (IPv6 as RFC 5952: lower case, the longest run of zero groups as ::). */
export function bigToIp(n: bigint, family: IpFamily): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((s) => Number((n >> s) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** The canonical text of an IP given in any valid form (undefined when it is not one). */
export function canonicalIp(ip: string): string | undefined {
  const f = familyOf(ip);
  const n = ipToBig(ip);
  return f && n !== undefined ? bigToIp(n, f) : undefined;
}

/** Parses "a.b.c.d/n" or "x::/n"; throws an Error naming the text when it is not a CIDR. */
export function parseCidr(text: string): Cidr {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text.trim());
  const family = m ? familyOf(m[1]) : undefined;
  if (!m || !family) throw new Error(`invalid CIDR address: ${text}`);
  const width = family === 'IPv4' ? 32 : 128;
  const prefix = Number(m[2]);
  if (prefix > width) throw new Error(`invalid CIDR address: ${text}`);
  const host = (1n << BigInt(width - prefix)) - 1n;
  const base = ipToBig(m[1])! & ~host & ((1n << BigInt(width)) - 1n);
  return { text: `${bigToIp(base, family)}/${prefix}`, family, base, prefix, size: host + 1n };
}

export function cidrContains(c: Cidr, ip: string): boolean {
  const n = ipToBig(ip);
  return familyOf(ip) === c.family && n !== undefined && n >= c.base && n < c.base + c.size;
}
