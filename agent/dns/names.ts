/**
 * Name helpers of the cluster DNS server: canonical names (lower case, no trailing dot), the
 * reverse names of IPv4 (in-addr.arpa) and IPv6 (ip6.arpa) addresses and back, and the dashed
 * form of an address CoreDNS uses for endpoints without a hostname (10-0-0-1, 2001-db8--1).
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Lower case without the trailing dot: DNS names compare case-insensitively (RFC 4343). */
export function canonical(name: string): string {
  const n = name.toLowerCase();
  return n.endsWith('.') ? n.slice(0, -1) : n;
}

/** True when name is zone or below it (both canonical). */
export function inZone(name: string, zone: string): boolean {
  return zone === '' || name === zone || name.endsWith('.' + zone);
}

/** The 32 hex digits of an IPv6 address, most significant first. */
export function ipv6Nibbles(ip: string): string {
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const parse = (s: string | undefined) => (s ? s.split(':') : []);
  let groups = parse(head);
  let rest = parse(tail);
  // An embedded IPv4 tail (::ffff:10.0.0.1) is two groups.
  const last = (tail === undefined ? groups : rest).at(-1);
  if (last !== undefined && last.includes('.')) {
    const o = last.split('.').map(Number);
    const v4 = [((o[0] << 8) | o[1]).toString(16), ((o[2] << 8) | o[3]).toString(16)];
    if (tail === undefined) groups = [...groups.slice(0, -1), ...v4];
    else rest = [...rest.slice(0, -1), ...v4];
  }
  const fill = tail === undefined ? [] : new Array<string>(8 - groups.length - rest.length).fill('0');
  return [...groups, ...fill, ...rest].map((g) => g.padStart(4, '0')).join('').toLowerCase();
}

/** The PTR owner name of an address ("1.0.0.10.in-addr.arpa"), or undefined for a non-address. */
export function reverseName(ip: string): string | undefined {
  if (isIPv4(ip)) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  if (isIPv6(ip)) return `${ipv6Nibbles(ip).split('').reverse().join('.')}.ip6.arpa`;
  return undefined;
}

/** The address a full reverse name stands for (canonical, compressed IPv6), or undefined. */
export function addressOfReverse(name: string): string | undefined {
  if (name.endsWith('.in-addr.arpa')) {
    const parts = name.slice(0, -'.in-addr.arpa'.length).split('.');
    if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) < 256)) return undefined;
    return parts.reverse().join('.');
  }
  if (name.endsWith('.ip6.arpa')) {
    const parts = name.slice(0, -'.ip6.arpa'.length).split('.');
    if (parts.length !== 32 || !parts.every((p) => /^[0-9a-f]$/.test(p))) return undefined;
    const hex = parts.reverse().join('');
    const groups = hex.match(/.{4}/g)!.map((g) => g.replace(/^0+(?=.)/, ''));
    return compressIPv6(groups);
  }
  return undefined;
}

/** RFC 5952 text of eight groups: the longest run (>= 2) of zero groups becomes "::". */
function compressIPv6(groups: string[]): string {
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** A canonical text form of an address (so "2001:DB8:0::1" and "2001:db8::1" are one key). */
export function canonicalIP(ip: string): string {
  if (isIPv6(ip)) return compressIPv6(ipv6Nibbles(ip).match(/.{4}/g)!.map((g) => g.replace(/^0+(?=.)/, '')));
  return ip;
}

/** CoreDNS's endpoint name for an address without a hostname: dots and colons become dashes. */
export function dashed(ip: string): string {
  return canonicalIP(ip).replace(/[.:]/g, '-');
}
