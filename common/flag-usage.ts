/**
 * The flag table of `--help`, laid out as upstream's pflag prints it (FlagUsagesWrapped): each
 * flag's head (`  -h, --name type`) padded to one computed column, the longest head followed by
 * three spaces, then the usage. Given the terminal's width (as kube-apiserver and the kubelet
 * pass theirs), usage text is wrapped at word boundaries into its column; when the column leaves
 * too little room, the usage goes on the following lines, indented, instead. Without a width
 * (output to a file or pipe) lines are not wrapped, as pflag's.
 */

export interface FlagUsageRow {
  /** `-h, --help` or `    --name type`, without the leading two spaces. */
  head: string;
  usage: string;
}

/** Narrowest usage column worth wrapping into; below it the usage starts on the next line. */
const MIN_USAGE_WIDTH = 30;
/** Indent of usage text placed below its flag. */
const BELOW_INDENT = 8;

/** The rows as lines (no trailing newline). `cols`: terminal width, or undefined/0 for no wrapping. */
export function formatFlagUsages(rows: readonly FlagUsageRow[], cols?: number): string[] {
  const heads = rows.map((r) => `  ${r.head}`);
  const column = Math.max(0, ...heads.map((h) => h.length)) + 3;
  const out: string[] = [];
  rows.forEach((r, i) => {
    const head = heads[i];
    if (!cols || cols <= 0) {
      out.push(head.padEnd(column) + r.usage);
      return;
    }
    if (cols - column >= MIN_USAGE_WIDTH) {
      const lines = wrap(r.usage, cols - column);
      out.push(head.padEnd(column) + lines[0], ...lines.slice(1).map((l) => ' '.repeat(column) + l));
      return;
    }
    out.push(head, ...wrap(r.usage, Math.max(MIN_USAGE_WIDTH, cols - BELOW_INDENT)).map((l) => ' '.repeat(BELOW_INDENT) + l));
  });
  return out;
}

/** Splits text into lines of at most width characters at spaces; a word longer than width gets a line of its own. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  lines.push(line);
  return lines;
}

/** The width to wrap --help at: the terminal's, when standard output is one; else undefined (no wrapping). */
export function terminalColumns(stream: { isTTY?: boolean; columns?: number } = process.stdout): number | undefined {
  return stream.isTTY && stream.columns ? stream.columns : undefined;
}
