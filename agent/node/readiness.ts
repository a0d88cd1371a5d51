/**
 * The Ready condition's inputs. The agent's own checks plug in here, and later issues add the
 * container runtime's and network's readiness (upstream: the kubelet's runtimeState errors) by
 * adding checks, without touching the status loop.
 */

export interface ReadinessCheck {
  /** Short name for logs and the condition message. */
  readonly name: string;
  /** Resolves undefined when ready, else a one-line reason it is not. Should not reject; a rejection counts as not ready. */
  check(): Promise<string | undefined>;
}

export interface Readiness {
  ready: boolean;
  /** Why not ready, one entry per failing check. */
  problems: string[];
}

/** A mutable set of checks; Ready is true when all pass. */
export class ReadinessSource {
  private readonly checks: ReadinessCheck[] = [];

  /** Adds a check; it is evaluated on every status computation. */
  add(check: ReadinessCheck): void {
    this.checks.push(check);
  }

  /** Runs every check (concurrently) and combines the results. Never rejects. */
  async evaluate(): Promise<Readiness> {
    const results = await Promise.all(
      this.checks.map(async (c) => {
        try {
          const why = await c.check();
          return why === undefined ? undefined : `${c.name}: ${why}`;
        } catch (e) {
          return `${c.name}: ${(e as Error).message}`;
        }
      }),
    );
    const problems = results.filter((x): x is string => x !== undefined);
    return { ready: problems.length === 0, problems };
  }
}

/** A check backed by a flag another component flips (e.g. "the first status was posted"). */
export class FlagCheck implements ReadinessCheck {
  private why: string | undefined;
  constructor(
    readonly name: string,
    initialReason?: string,
  ) {
    this.why = initialReason;
  }
  /** Marks the check passing (undefined) or failing with a reason. */
  set(reason: string | undefined): void {
    this.why = reason;
  }
  check(): Promise<string | undefined> {
    return Promise.resolve(this.why);
  }
}
