/**
 * The proxy's nftables table as data: chains with their rules (as nft statements), sets and
 * verdict maps with their elements. nft-rules.ts builds it (pure), nft-render.ts turns it into the
 * text `nft -f -` applies, whole or as the difference from the previous sync.
 */

export type Family = 'ip' | 'ip6';

/** The name of our table in each family (upstream's is kube-proxy). */
export const TABLE_NAME = 'svc-proxy';

export interface NftChain {
  /** For a base chain: its hook declaration, e.g. "type nat hook output priority -100 ;". */
  base?: string;
  /** The rules, in order, as nft rule statements. */
  rules: string[];
}

export interface NftSet {
  /** Set or verdict map. */
  kind: 'set' | 'map';
  /** The declaration inside the braces, e.g. "type ipv4_addr ;" or "type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ;". */
  spec: string;
  /**
   * Filled by the kernel (session affinity sets): the proxy never writes their elements, and an
   * incremental sync keeps them (so clients keep their endpoint across syncs, as upstream).
   */
  dynamic: boolean;
  /** Element key → value ('' for a set's elements, the verdict for a map's). */
  elements: Map<string, string>;
}

export interface NftTable {
  family: Family;
  /** Chains by name; Map order is declaration order. */
  chains: Map<string, NftChain>;
  /** Sets and maps by name. */
  sets: Map<string, NftSet>;
}

export function emptyTable(family: Family): NftTable {
  return { family, chains: new Map(), sets: new Map() };
}
