/**
 * iptables-restore input for the iptables mode, applied with `iptables-restore --noflush` (or
 * ip6tables-restore) as one input per family, as upstream's iptables proxier does:
 *
 * - every chain of ours is declared (`:NAME - [0:0]`, which creates it or flushes it), then
 *   filled; on later syncs only the chains whose rules changed (upstream's partial syncs: the
 *   others are left as they are); chains of ours the rules no longer use (a Service gone, or a
 *   previous run's) are declared too, so flushed, and deleted last (`-X`) once nothing jumps to
 *   them;
 * - the jumps from the built-in chains (upstream's iptablesJumpChains) are inserted when
 *   iptables-save does not show them, and jumps into our chains that are not one of those (or a
 *   second copy) are deleted;
 * - the clean stop deletes the jumps, flushes and deletes every chain of ours.
 *
 * What is there comes from iptables-save (parseSave): the chains whose names start with SVC- and
 * the rules of other chains that jump to them.
 */
import { CHAIN_PREFIX, JUMPS, type IptRules, type IptTableName } from './ipt-rules';

const TABLES: readonly IptTableName[] = ['filter', 'nat'];

/** A rule of a chain not ours whose target is one of ours. */
export interface SavedJump {
  chain: string;
  /** The rule as iptables-save prints it, after `-A <chain> `. */
  rule: string;
  target: string;
}

/** What iptables-save shows of ours, per table. */
export interface SavedState {
  chains: Record<IptTableName, Set<string>>;
  jumps: Record<IptTableName, SavedJump[]>;
}

export function emptySaved(): SavedState {
  return { chains: { filter: new Set(), nat: new Set() }, jumps: { filter: [], nat: [] } };
}

const ours = (chain: string) => chain.startsWith(CHAIN_PREFIX);

/** The chains of ours and the jumps into them in iptables-save output (the nat and filter tables; others ignored). */
export function parseSave(text: string): SavedState {
  const s = emptySaved();
  let table: IptTableName | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) {
      const name = line.slice(1).trim();
      table = name === 'nat' || name === 'filter' ? name : undefined;
      continue;
    }
    if (!table) continue;
    if (line.startsWith(':')) {
      const chain = line.slice(1).split(' ')[0];
      if (ours(chain)) s.chains[table].add(chain);
      continue;
    }
    const m = /^-A (\S+) (.*)$/.exec(line);
    if (!m || ours(m[1])) continue;
    const target = /(?:^| )-[jg] (\S+)/.exec(m[2])?.[1];
    if (target && ours(target)) s.jumps[table].push({ chain: m[1], rule: m[2], target });
  }
  return s;
}

/** The jumps to insert and to delete so that exactly JUMPS' jumps of `table` exist (matched by chain and target). */
function jumpChanges(table: IptTableName, saved: SavedState): { insert: string[]; remove: string[] } {
  const wanted = JUMPS.filter((j) => j.table === table);
  const insert: string[] = [];
  const remove: string[] = [];
  const kept = new Set<string>();
  for (const j of saved.jumps[table]) {
    const key = `${j.chain} ${j.target}`;
    const isWanted = wanted.some((w) => w.chain === j.chain && w.rule.endsWith(`-j ${j.target}`));
    if (isWanted && !kept.has(key)) kept.add(key);
    else remove.push(`-D ${j.chain} ${j.rule}`);
  }
  for (const w of wanted) {
    const target = w.rule.slice(w.rule.lastIndexOf('-j ') + 3);
    if (!kept.has(`${w.chain} ${target}`)) insert.push(`-I ${w.chain} ${w.rule}`);
  }
  return { insert, remove };
}

const sameRules = (a: readonly string[] | undefined, b: readonly string[]) => a !== undefined && a.length === b.length && a.every((r, i) => r === b[i]);

/**
 * The restore input that replaces what `saved` shows with `next`; '' when nothing differs. With
 * `prev` (the rules last applied, which `saved` then describes), a chain whose rules are unchanged
 * is neither declared nor written: --noflush leaves it as it is (upstream's partial sync).
 */
export function renderRestore(next: IptRules, saved: SavedState, prev?: IptRules): string {
  const out: string[] = [];
  for (const table of TABLES) {
    const chains = next.tables[table];
    const written = [...chains].filter(([c, rules]) => !(prev && saved.chains[table].has(c) && sameRules(prev.tables[table].get(c), rules)));
    const stale = [...saved.chains[table]].filter((c) => !chains.has(c));
    const { insert, remove } = jumpChanges(table, saved);
    if (written.length + stale.length + insert.length + remove.length === 0) continue;
    out.push(`*${table}`);
    for (const c of [...written.map(([c]) => c), ...stale]) out.push(`:${c} - [0:0]`);
    out.push(...remove, ...insert);
    for (const [c, rules] of written) for (const r of rules) out.push(`-A ${c} ${r}`);
    for (const c of stale) out.push(`-X ${c}`);
    out.push('COMMIT');
  }
  return out.length === 0 ? '' : out.join('\n') + '\n';
}

/** The restore input that removes every chain of ours and every jump into them; '' when there is none. */
export function renderCleanup(saved: SavedState): string {
  const out: string[] = [];
  for (const table of TABLES) {
    const chains = [...saved.chains[table]];
    if (chains.length === 0 && saved.jumps[table].length === 0) continue;
    out.push(`*${table}`);
    for (const c of chains) out.push(`:${c} - [0:0]`);
    for (const j of saved.jumps[table]) out.push(`-D ${j.chain} ${j.rule}`);
    for (const c of chains) out.push(`-X ${c}`);
    out.push('COMMIT');
  }
  return out.length === 0 ? '' : out.join('\n') + '\n';
}
