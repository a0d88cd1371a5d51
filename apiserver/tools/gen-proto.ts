/**
 * `npm run proto`: writes proto/k8s.io/**\/generated.proto from the resource schemas
 * (proto-files.ts). `--check` writes nothing and exits 1 when a committed file differs.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { protoFiles } from './proto-files';

// Compiled to <outDir>/apiserver/tools/gen-proto.js; the sources are three levels up.
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
  for (const f of protoFiles()) {
    const path = join(repoRoot, f.path);
    if (current(path) === f.content) continue;
    stale.push(f.path);
    if (!check) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, f.content);
    }
  }
  if (check && stale.length > 0) {
    process.stderr.write(`stale generated .proto files: ${stale.join(', ')}; run \`npm run proto\` and commit the result\n`);
    return 1;
  }
  process.stdout.write(check ? 'generated .proto files are up to date\n' : stale.length ? `wrote ${stale.join(', ')}\n` : 'generated .proto files were up to date\n');
  return 0;
}

process.exitCode = main(process.argv.slice(2));
