/**
 * The size rules of docs/architecture.md ("Sizes"): no source file over 450 lines and no
 * function over 100 lines, unless the table there names it with its reason. A new long file or
 * function fails here with its place; a listed one that shrank below the limit must leave the
 * table (so the table stays true).
 */
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..', '..', '..');
const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 100;

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The exceptions table of docs/architecture.md: `| path | name or (file) | reason |` rows. */
function exceptions(): Map<string, string> {
  const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
  const section = doc.split(/^### Sizes$/m)[1]?.split(/^#{2,3} /m)[0] ?? '';
  const out = new Map<string, string>();
  for (const line of section.split('\n')) {
    const m = /^\| `([^`]+)` \| `([^`]+)` \| (.+) \|$/.exec(line);
    if (m) out.set(`${m[1]}#${m[2]}`, m[3]);
  }
  return out;
}

function functionName(node: ts.Node, sf: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(sf);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(sf);
  return '(anonymous)';
}

interface Oversize {
  key: string;
  lines: number;
}

function oversize(file: string): Oversize[] {
  const text = readFileSync(file, 'utf8');
  const rel = relative(root, file);
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: Oversize[] = [];
  const fileLines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (fileLines > MAX_FILE_LINES) found.push({ key: `${rel}#(file)`, lines: fileLines });
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) found.push({ key: `${rel}#${functionName(node, sf)}`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const all = ['agent', 'apiserver', 'common'].flatMap((d) => sources(join(root, d))).flatMap(oversize);

test(`no source file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES} without a stated reason`, (t) => {
  const allowed = exceptions();
  const unexplained = all.filter((o) => !allowed.has(o.key)).map((o) => `${o.key} (${o.lines} lines)`);
  t.deepEqual(unexplained, [], 'split these, or name them with a reason in docs/architecture.md, "Sizes"');
});

test('every size exception in docs/architecture.md is still over its limit', (t) => {
  const over = new Set(all.map((o) => o.key));
  const stale = [...exceptions().keys()].filter((k) => !over.has(k));
  t.deepEqual(stale, [], 'these are within the limits now: remove them from the table');
});
