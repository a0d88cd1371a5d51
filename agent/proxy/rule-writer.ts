/**
 * The contract between the proxy's loop (proxier.ts) and its modes' rule writers (nft-writer.ts,
 * ipt-writer.ts), apart from both so neither imports the other.
 */
import type { ServicePortInfo } from './service-ports';

/** Applies one nft script as a single transaction; rejects (with nft's message) when nft refuses it. */
export interface NftRunner {
  apply(script: string): Promise<void>;
}

/** What a writer's sync did. */
export interface WriterSync {
  /** Every rule was written (start, after a failure), not only what changed. */
  full: boolean;
  /** Size of what was applied (0 when nothing changed). */
  bytes: number;
}

/**
 * Writes the rules of one proxy mode. sync applies the rules for these ports atomically or
 * rejects (nothing known applied: the caller then calls reset and retries); reset makes the next
 * sync start from what the kernel holds; cleanUp removes every rule, chain and set of ours.
 */
export interface RuleWriter {
  sync(ports: readonly ServicePortInfo[]): Promise<WriterSync>;
  reset(): void;
  cleanUp(): Promise<void>;
}
