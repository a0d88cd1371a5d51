/** Progress lines for a human watching the run; stdout is reserved for the one JSON result. */

const started = Date.now();

/** Writes one timestamped line to stderr. */
export function progress(message: string): void {
  const s = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${s}s] ${message}\n`);
}
