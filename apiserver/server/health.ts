/** One named check of /livez or /readyz (4.8). Returns undefined when healthy, else the reason. */
export interface HealthCheck {
  name: string;
  check(): Promise<string | undefined> | string | undefined;
}

/**
 * Renders /livez, /readyz and /healthz with verbose, exclude and per-check paths (4.8). Output
 * follows upstream's format: "[+]name ok", "[-]name failed: reason withheld" (reasons go to the
 * log, not to unauthenticated callers), then "<endpoint> check passed" or "failed".
 */
export async function runChecks(
  endpoint: string,
  checks: readonly HealthCheck[],
  query: URLSearchParams,
  only?: string,
): Promise<{ status: number; body: string } | undefined> {
  const excluded = new Set(query.getAll('exclude'));
  const verbose = query.has('verbose') && query.get('verbose') !== 'false';
  if (only !== undefined) {
    const c = checks.find((x) => x.name === only);
    if (!c) return undefined;
    const reason = await c.check();
    return reason ? { status: 500, body: `internal server error: ${reason}\n` } : { status: 200, body: 'ok' };
  }
  const lines: string[] = [];
  let failed = false;
  for (const c of checks) {
    if (excluded.has(c.name)) {
      lines.push(`[+]${c.name} excluded: ok`);
      continue;
    }
    const reason = await c.check();
    if (reason) {
      failed = true;
      lines.push(`[-]${c.name} failed: reason withheld`);
    } else lines.push(`[+]${c.name} ok`);
  }
  // Upstream rejects excludes that name no check, so typos do not silently pass.
  const unknown = [...excluded].filter((e) => !checks.some((c) => c.name === e));
  for (const u of unknown) lines.push(`warn: some health checks cannot be excluded: no matches for "${u}"`);
  if (failed) return { status: 500, body: `${lines.join('\n')}\n${endpoint} check failed\n` };
  return { status: 200, body: verbose ? `${lines.join('\n')}\n${endpoint} check passed\n` : 'ok' };
}
