import test from 'ava';
import { isAgentConfig, parseDoc, unmatchedLines } from './doc-blocks';

const fence = '```';

test('markers attach to the fenced block right after them; unmarked blocks carry none', (t) => {
  const blocks = parseDoc(
    [
      '# T',
      `${fence}sh`,
      'not run',
      fence,
      '<!-- doc-file: a/b.yaml -->',
      '<!-- doc-config: invalid -->',
      `${fence}yaml`,
      'kind: NodeAgentConfiguration',
      fence,
      '<!-- doc-test: one -->',
      `${fence}sh`,
      'echo hi',
      fence,
      'text',
      '<!-- doc-output: one -->',
      `${fence}text`,
      'h...',
      fence,
    ].join('\n'),
  );
  t.is(blocks.length, 4);
  t.like(blocks[0], { line: 2, lang: 'sh', content: 'not run\n' });
  t.is(blocks[0].test, undefined);
  t.like(blocks[1], { file: 'a/b.yaml', config: 'invalid' });
  t.true(isAgentConfig(blocks[1]));
  t.like(blocks[2], { test: 'one', content: 'echo hi\n' });
  t.like(blocks[3], { output: 'one', lang: 'text' });
});

test('a marker that is not followed by a block, a test on a non-sh block or an output without its test is an error', (t) => {
  t.throws(() => parseDoc(`<!-- doc-test: x -->\n\n${fence}sh\nls\n${fence}\n`), { message: /line 1: doc-test marker is not directly followed/ });
  t.throws(() => parseDoc(`<!-- doc-test: x -->\n${fence}yaml\na: 1\n${fence}\n`), { message: /only sh blocks run/ });
  t.throws(() => parseDoc(`<!-- doc-output: x -->\n${fence}text\nhi\n${fence}\n`), { message: /does not follow a doc-test/ });
  t.throws(() => parseDoc(`${fence}sh\nls\n`), { message: /not closed/ });
  t.throws(() => parseDoc(`<!-- doc-test: x -->\n${fence}sh\nls\n${fence}\n<!-- doc-test: x -->\n${fence}sh\nls\n${fence}\n`), { message: /defined twice/ });
});

test('expected output lines match actual lines with surrounding spaces ignored and ... as a wildcard', (t) => {
  const actual = 'NAME   STATUS\nnode-2   Ready   <none>\n  exit status 78\n';
  t.deepEqual(unmatchedLines('node-2 ... Ready ...\nexit status 78\n\n', actual), []);
  t.deepEqual(unmatchedLines('exit status 7\nnode-3 ...', actual), ['exit status 7', 'node-3 ...']);
  t.deepEqual(unmatchedLines('a.c', 'abc'), ['a.c'], 'regex characters are literal');
});
