/**
 * The committed proto/k8s.io/ files cannot rot: they are regenerated in memory from the schemas
 * and compared with the files (as the docs reference check does for docs/reference).
 */
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { protoFiles } from '../../../../apiserver/tools/proto-files';

const repoRoot = join(__dirname, '..', '..', '..', '..', '..');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

test('the committed proto/k8s.io files equal what the schemas generate (else run `npm run proto`)', (t) => {
  const files = protoFiles();
  t.true(files.length >= 12);
  for (const f of files) {
    let committed: string;
    try {
      committed = readFileSync(join(repoRoot, f.path), 'utf8');
    } catch {
      t.fail(`${f.path} is missing: run \`npm run proto\` and commit the result`);
      continue;
    }
    t.true(committed === f.content, `${f.path} is stale: run \`npm run proto\` and commit the result`);
  }
  const extra = walk(join(repoRoot, 'proto', 'k8s.io'))
    .map((p) => relative(repoRoot, p))
    .filter((p) => !files.some((f) => f.path === p));
  t.deepEqual(extra, [], 'files no schema generates any more: delete them');
});

test('the generated files carry upstream package names and numbers for the core types', (t) => {
  const core = protoFiles().find((f) => f.path === 'proto/k8s.io/api/core/v1/generated.proto')!.content;
  t.regex(core, /^package k8s\.io\.api\.core\.v1;$/m);
  t.regex(core, /message Volume \{\n[^}]*optional string name = 1;\n[^}]*optional VolumeSource volumeSource = 2;\n\}/);
  t.regex(core, /message Probe \{[^}]*optional ProbeHandler handler = 1;/);
  t.regex(core, /map<string, bytes> data = 2;/);
  t.regex(core, /repeated int64 supplementalGroups = 4;/);
});
