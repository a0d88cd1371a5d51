/**
 * The generated references cannot rot: they are regenerated in memory from the code and compared
 * with the committed files, and the hand-written field descriptions are checked against the schema
 * and the agent's sources.
 */
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fieldDescriptions, notActedOn } from '../../../docs/tools/agent-config-descriptions';
import { generatedReferences, schemaFields } from '../../../docs/tools/reference';

const repoRoot = join(__dirname, '..', '..', '..', '..');

test('the committed docs/reference files equal what the code generates (else run `npm run docs`)', (t) => {
  const files = generatedReferences();
  t.deepEqual(
    files.map((f) => f.path),
    ['docs/reference/agent-authorization.md', 'docs/reference/agent-config.md', 'docs/reference/agent-flags.md', 'docs/reference/apiserver-flags.md'],
  );
  for (const f of files) {
    let committed: string;
    try {
      committed = readFileSync(join(repoRoot, f.path), 'utf8');
    } catch {
      t.fail(`${f.path} is missing: run \`npm run docs\` and commit the result`);
      continue;
    }
    t.true(committed === f.content, `${f.path} is stale: run \`npm run docs\` and commit the result`);
  }
});

test('every schema field has a description and every description names a schema field', (t) => {
  const paths = schemaFields().map((f) => f.path);
  t.true(paths.includes('memorySwap.swapBehavior') && paths.includes('registerWithTaints[].effect'), 'nested and list-item fields are walked');
  t.deepEqual(paths.filter((p) => fieldDescriptions[p] === undefined), [], 'add these to docs/tools/agent-config-descriptions.ts');
  t.deepEqual(Object.keys(fieldDescriptions).filter((p) => !paths.includes(p)), [], 'these describe fields the schema no longer has');
  t.deepEqual(notActedOn.filter((p) => !paths.includes(p)), []);
});

function agentSources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (relative(repoRoot, p) !== join('agent', 'config')) out.push(...agentSources(p));
    } else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

test('fields the reference marks "not acted on" are read nowhere in agent/ outside agent/config/', (t) => {
  const sources = agentSources(join(repoRoot, 'agent')).map((p) => ({ p, text: readFileSync(p, 'utf8') }));
  t.true(sources.length > 20 && !sources.some((s) => s.p.includes(`${join('agent', 'config')}/`)));
  for (const field of notActedOn) {
    const leaf = field.split('.').at(-1)!;
    const users = sources.filter((s) => new RegExp(`\\b${leaf}\\b`).test(s.text)).map((s) => relative(repoRoot, s.p));
    t.deepEqual(users, [], `${field} is now used: take it out of notActedOn in docs/tools/agent-config-descriptions.ts and run \`npm run docs\``);
  }
  // The check can fail: a field the agent does use is found.
  t.true(sources.some((s) => /\bnodeLeaseDurationSeconds\b/.test(s.text)));
});
