/**
 * Finds the fenced blocks of a Markdown document and the doc-test markers in front of them
 * (the conventions are described in docs/README.md, "Examples that run"). Pure: text in, blocks
 * out; a marker that is not directly followed by a fenced block is an error, so a typo cannot
 * silently turn a tested example into an untested one.
 */

export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** Info string of the fence (`sh`, `yaml`, `text` ...), '' when none. */
  lang: string;
  /** The block's content, with a final newline. */
  content: string;
  /** `<!-- doc-test: NAME -->`: run this shell block. */
  test?: string;
  /** `<!-- doc-output: NAME -->`: lines the example NAME must print. */
  output?: string;
  /** `<!-- doc-file: PATH -->`: write the content to PATH in the scratch directory. */
  file?: string;
  /** `<!-- doc-config: invalid -->`: a NodeAgentConfiguration example that must be rejected. */
  config?: 'invalid';
}

const markerRe = /^<!--\s*doc-(test|output|file|config):\s*(.*?)\s*-->\s*$/;
const fenceRe = /^```\s*([A-Za-z0-9_+-]*)\s*$/;

export function parseDoc(text: string): DocBlock[] {
  const lines = text.split('\n');
  const blocks: DocBlock[] = [];
  let pending: { kind: string; value: string; line: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const m = markerRe.exec(l);
    if (m) {
      if (m[2] === '') throw new Error(`line ${i + 1}: doc-${m[1]} marker without a value`);
      if (pending.some((p) => p.kind === m[1])) throw new Error(`line ${i + 1}: two doc-${m[1]} markers on one block`);
      pending.push({ kind: m[1], value: m[2], line: i + 1 });
      continue;
    }
    const f = fenceRe.exec(l);
    if (f) {
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && lines[i].trimEnd() !== "```"; i++) body.push(lines[i]);
      if (i >= lines.length) throw new Error(`line ${start + 1}: fenced block is not closed`);
      const block: DocBlock = { line: start + 1, lang: f[1], content: body.join('\n') + '\n' };
      for (const p of pending) {
        if (p.kind === 'test') block.test = p.value;
        else if (p.kind === 'output') block.output = p.value;
        else if (p.kind === 'file') block.file = p.value;
        else if (p.value === 'invalid') block.config = 'invalid';
        else throw new Error(`line ${p.line}: doc-config takes only "invalid"`);
      }
      if (block.test && block.lang !== 'sh') throw new Error(`line ${block.line}: doc-test ${block.test} marks a ${block.lang || 'plain'} block; only sh blocks run`);
      pending = [];
      blocks.push(block);
      continue;
    }
    if (pending.length > 0) {
      throw new Error(`line ${pending[0].line}: doc-${pending[0].kind} marker is not directly followed by a fenced block`);
    }
  }
  if (pending.length > 0) throw new Error(`line ${pending[0].line}: doc-${pending[0].kind} marker at the end of the document`);
  const names = blocks.filter((b) => b.test).map((b) => b.test!);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new Error(`doc-test ${dup} is defined twice`);
  for (const b of blocks) {
    if (b.output && !blocks.slice(0, blocks.indexOf(b)).some((p) => p.test === b.output)) {
      throw new Error(`line ${b.line}: doc-output ${b.output} does not follow a doc-test of that name`);
    }
  }
  return blocks;
}

/** True when a block is a NodeAgentConfiguration example. */
export function isAgentConfig(b: DocBlock): boolean {
  return (b.lang === 'yaml' || b.lang === 'yml') && /^kind:\s*NodeAgentConfiguration\s*$/m.test(b.content);
}

/**
 * Lines of an expected-output block that match no line of the actual output. Surrounding
 * spaces are ignored on both sides and `...` matches anything.
 */
export function unmatchedLines(expected: string, actual: string): string[] {
  const got = actual.split('\n').map((l) => l.trim());
  return expected
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .filter((l) => {
      const re = new RegExp('^' + l.split('...').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
      return !got.some((g) => re.test(g));
    });
}
