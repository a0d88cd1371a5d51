/**
 * `npm run docs`: writes docs/reference/*.md from the definitions in the code (reference.ts).
 * `--check` writes nothing and exits 1 when a committed file differs, naming it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedReferences } from './reference';

// Compiled to <outDir>/docs/tools/gen-reference.js; the sources are three levels up.
const repoRoot = join(__dirname, '..', '..', '..');

function current(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function main(argv: readonly string[]): number {
  const check = argv.includes('--check');
  const stale: string[] = [];
  for (const f of generatedReferences()) {
    const path = join(repoRoot, f.path);
    if (current(path) === f.content) continue;
    stale.push(f.path);
    if (!check) writeFileSync(path, f.content);
  }
  if (check && stale.length > 0) {
    process.stderr.write(`stale generated references: ${stale.join(', ')}; run \`npm run docs\` and commit the result\n`);
    return 1;
  }
  process.stdout.write(check ? 'generated references are up to date\n' : stale.length ? `wrote ${stale.join(', ')}\n` : 'generated references were up to date\n');
  return 0;
}

process.exitCode = main(process.argv.slice(2));
