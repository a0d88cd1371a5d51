import test from 'ava';
import { formatFlagUsages, terminalColumns, wrap } from '../../../common/flag-usage';

const rows = [
  { head: '    --port int', usage: 'Port to serve on (default 10250)' },
  { head: '    --default-unreachable-toleration-seconds int', usage: 'tolerationSeconds of the unreachable:NoExecute toleration added to pods that have none' },
  { head: '-h, --help', usage: 'Print this help and exit' },
];

test("without a width, pflag's layout: one computed column, three spaces after the longest head, no wrapping", (t) => {
  const lines = formatFlagUsages(rows);
  const column = '  '.length + rows[1].head.length + 3;
  t.deepEqual(lines, [
    '      --port int'.padEnd(column) + rows[0].usage,
    `      --default-unreachable-toleration-seconds int   ${rows[1].usage}`,
    '  -h, --help'.padEnd(column) + rows[2].usage,
  ]);
});

test('with a terminal width, usage wraps inside its column; a column too wide puts the usage below, indented', (t) => {
  const wide = formatFlagUsages(rows, 100);
  const column = 2 + rows[1].head.length + 3;
  t.true(wide.every((l) => l.length <= 100), wide.join('\n'));
  t.true(wide.length > 3, 'the long usage was wrapped');
  for (const l of wide.filter((x) => x.startsWith(' '.repeat(column)))) t.not(l[column], ' ');
  const narrow = formatFlagUsages(rows, 60);
  t.true(narrow.every((l) => l.length <= 60), narrow.join('\n'));
  t.is(narrow[0], '      --port int');
  t.is(narrow[1], '        Port to serve on (default 10250)');
});

test('wrap splits at spaces; an over-long word keeps a line of its own', (t) => {
  t.deepEqual(wrap('a bb ccc dddd', 6), ['a bb', 'ccc', 'dddd']);
  t.deepEqual(wrap('short averyveryverylongword x', 8), ['short', 'averyveryverylongword', 'x']);
  t.deepEqual(wrap('', 10), ['']);
});

test('the width comes from a terminal only', (t) => {
  t.is(terminalColumns({ isTTY: true, columns: 120 }), 120);
  t.is(terminalColumns({ isTTY: false, columns: 120 }), undefined);
  t.is(terminalColumns({}), undefined);
});
