/**
 * The nftables mode's rule writer (upstream kube-proxy's nftables mode): builds the table of each
 * IP family (nft-rules.ts, pure) and applies all families in one `nft -f -` transaction; full at
 * start and after a failure (replacing any table of ours a previous run left), otherwise only the
 * difference from the table last applied (nft-render.ts). The clean stop deletes our table.
 */
import type { Family, NftTable } from './nft-model';
import { renderDelete, renderDiff, renderFull } from './nft-render';
import { FragmentCache, buildTable, type RuleOptions } from './nft-rules';
import type { NftRunner, RuleWriter, WriterSync } from './rule-writer';
import type { ServicePortInfo } from './service-ports';

export class NftWriter implements RuleWriter {
  private applied: NftTable[] | undefined;
  /** One fragment cache per family: unchanged Service ports are not rebuilt. */
  private readonly caches = new Map<Family, FragmentCache>();

  constructor(
    private readonly nft: NftRunner,
    private readonly families: readonly Family[],
    private readonly rules: RuleOptions,
  ) {}

  async sync(ports: readonly ServicePortInfo[]): Promise<WriterSync> {
    const tables = this.families.map((f) => buildTable(f, ports, this.rules, this.cacheOf(f)));
    let script: string | undefined;
    if (this.applied) {
      const parts = tables.map((t, i) => renderDiff(this.applied![i], t));
      if (parts.every((p) => p !== undefined)) script = parts.join('');
    }
    const full = script === undefined;
    if (full) script = tables.map(renderFull).join('');
    if (script !== '') await this.nft.apply(script!);
    this.applied = tables;
    return { full, bytes: script!.length };
  }

  reset(): void {
    this.applied = undefined; // the kernel's table is unknown now: the next sync is full
  }

  async cleanUp(): Promise<void> {
    await this.nft.apply(this.families.map(renderDelete).join(''));
  }

  private cacheOf(f: Family): FragmentCache {
    let c = this.caches.get(f);
    if (!c) this.caches.set(f, (c = new FragmentCache()));
    return c;
  }
}
