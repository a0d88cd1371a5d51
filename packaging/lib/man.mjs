/**
 * Man pages from the programs' own --help text, so the two cannot disagree: the text before
 * "Flags:" becomes DESCRIPTION, each flag row becomes an OPTIONS entry. FILES and SEE ALSO come
 * from the caller, since --help does not know where the package installs things.
 */

/** Parses `--help` output. Returns { description: string[] (paragraphs), flags: {short?, name, value?, text}[] }. */
export function parseHelp(text) {
  const lines = text.split('\n');
  const flagsAt = lines.findIndex((l) => /^Flags:\s*$/.test(l));
  if (flagsAt < 0) throw new Error('help text has no "Flags:" line');

  const paragraphs = [];
  let current = [];
  let skipUsage = false;
  for (const raw of lines.slice(0, flagsAt)) {
    const line = raw.trim();
    if (/^Usage:/.test(line)) {
      // "Usage: prog [flags]" on one line, or "Usage:" followed by an indented synopsis line.
      skipUsage = line === 'Usage:';
      if (current.length) paragraphs.push(current.join(' '));
      current = [];
      continue;
    }
    if (skipUsage) {
      skipUsage = false;
      continue;
    }
    if (line === '') {
      if (current.length) paragraphs.push(current.join(' '));
      current = [];
    } else current.push(line);
  }
  if (current.length) paragraphs.push(current.join(' '));

  const flags = [];
  const row = /^\s+(?:-([A-Za-z0-9]), )?--([A-Za-z0-9][A-Za-z0-9-]*)(?: ([A-Za-z][\w.]*))?\s{2,}(\S.*)$/;
  for (const line of lines.slice(flagsAt + 1)) {
    if (line.trim() === '') continue;
    const m = row.exec(line);
    if (m) flags.push({ short: m[1], name: m[2], value: m[3], text: m[4].trim() });
    else if (flags.length && /^\s{6,}\S/.test(line)) flags[flags.length - 1].text += ' ' + line.trim();
    else throw new Error(`cannot parse help line: ${JSON.stringify(line)}`);
  }
  if (flags.length === 0) throw new Error('help text lists no flags');
  return { description: paragraphs, flags };
}

/** Escapes text for roff: backslashes, hyphens (so they render as ASCII minus signs), and a leading dot or quote. */
export function roffEscape(text) {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/, '\\&$1');
}

/**
 * Renders a man page. `page`: { name, section, summary, date (YYYY-MM-DD), source ("svc 0.1.0"),
 * manual, help (the --help text), files: {path, text}[], seeAlso: string[] ("name(section)") }.
 */
export function renderManPage(page) {
  const { description, flags } = parseHelp(page.help);
  const out = [];
  out.push(`.TH ${page.name.toUpperCase().replace(/-/g, '\\-')} ${page.section} "${page.date}" "${page.source}" "${page.manual}"`);
  out.push('.SH NAME');
  out.push(`${roffEscape(page.name)} \\- ${roffEscape(page.summary)}`);
  out.push('.SH SYNOPSIS');
  out.push(`.B ${roffEscape(page.name)}`);
  out.push('[\\fIflags\\fR]');
  out.push('.SH DESCRIPTION');
  description.forEach((p, i) => {
    if (i > 0) out.push('.PP');
    out.push(roffEscape(p));
  });
  out.push('.SH OPTIONS');
  for (const f of flags) {
    out.push('.TP');
    const names = [f.short ? `\\fB\\-${f.short}\\fR, ` : '', `\\fB\\-\\-${roffEscape(f.name)}\\fR`].join('');
    out.push(f.value ? `${names} \\fI${roffEscape(f.value)}\\fR` : names);
    out.push(roffEscape(f.text));
  }
  if (page.files?.length) {
    out.push('.SH FILES');
    for (const f of page.files) {
      out.push('.TP');
      out.push(`.I ${roffEscape(f.path)}`);
      out.push(roffEscape(f.text));
    }
  }
  if (page.seeAlso?.length) {
    out.push('.SH SEE ALSO');
    out.push(
      page.seeAlso
        .map((ref) => {
          const m = /^(.+)\((\w+)\)$/.exec(ref);
          if (!m) throw new Error(`see-also entry ${ref} is not name(section)`);
          return `\\fB${roffEscape(m[1])}\\fR(${m[2]})`;
        })
        .join(',\n'),
    );
  }
  return out.join('\n') + '\n';
}
