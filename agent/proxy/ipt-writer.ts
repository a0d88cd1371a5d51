/**
 * The iptables mode's rule writer (upstream kube-proxy's iptables mode): per IP family, one
 * `iptables-restore --noflush` (ip6tables-restore for IPv6) input holding every chain of ours
 * (ipt-rules.ts, ipt-render.ts). The first sync, and the first after a failure, reads
 * iptables-save to find what a previous run (or this one) left, and writes every chain: a
 * previous run's chains are replaced or deleted and its jumps kept or removed. Later syncs know
 * what they applied and write only the chains that changed (upstream's partial syncs), nothing
 * for a family where nothing did. The clean stop reads iptables-save again and removes every
 * chain of ours and the jumps into them.
 */
import type { Family } from './nft-model';
import { buildIptRules, JUMPS, type IptRules } from './ipt-rules';
import { emptySaved, parseSave, renderCleanup, renderRestore, type SavedState } from './ipt-render';
import type { RuleOptions } from './nft-rules';
import type { RuleWriter, WriterSync } from './rule-writer';
import type { ServicePortInfo } from './service-ports';

/** iptables-save and iptables-restore of each family; both reject with the tool's message when it fails. */
export interface IptablesRunner {
  /** iptables-save's output (ip6tables-save for ip6). */
  save(family: Family): Promise<string>;
  /** Applies one input with `iptables-restore --noflush` (ip6tables-restore for ip6): all of it or nothing. */
  restore(family: Family, input: string): Promise<void>;
}

/** What iptables holds of ours once `r` has been applied (the chains, and one of each jump). */
function stateAfter(r: IptRules): SavedState {
  const s = emptySaved();
  for (const table of ['filter', 'nat'] as const) {
    for (const c of r.tables[table].keys()) s.chains[table].add(c);
    for (const j of JUMPS) if (j.table === table) s.jumps[table].push({ chain: j.chain, rule: j.rule, target: j.rule.slice(j.rule.lastIndexOf('-j ') + 3) });
  }
  return s;
}

export class IptablesWriter implements RuleWriter {
  /** Per family, what iptables holds of ours and the rules that made it; unknown (read again) at start and after a failure. */
  private known = new Map<Family, { state: SavedState; rules: IptRules }>();

  constructor(
    private readonly runner: IptablesRunner,
    private readonly families: readonly Family[],
    private readonly rules: RuleOptions,
  ) {}

  async sync(ports: readonly ServicePortInfo[]): Promise<WriterSync> {
    let full = false;
    let bytes = 0;
    for (const f of this.families) {
      const rules = buildIptRules(f, ports, this.rules);
      const known = this.known.get(f);
      if (!known) full = true;
      const state = known ? known.state : parseSave(await this.runner.save(f));
      const input = renderRestore(rules, state, known?.rules);
      if (input === '') continue;
      this.known.delete(f);
      await this.runner.restore(f, input);
      this.known.set(f, { state: stateAfter(rules), rules });
      bytes += input.length;
    }
    return { full, bytes };
  }

  reset(): void {
    this.known.clear();
  }

  async cleanUp(): Promise<void> {
    this.known.clear();
    for (const f of this.families) {
      const input = renderCleanup(parseSave(await this.runner.save(f)));
      if (input !== '') await this.runner.restore(f, input);
    }
  }
}
