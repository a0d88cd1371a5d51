/**
 * Reads packaging/debian/changelog, the single source of the Debian version: its top entry gives
 * the version and the date used as SOURCE_DATE_EPOCH (file times, man page dates).
 */
import { readFileSync } from 'node:fs';

/**
 * Parses the top entry. Returns { source, version, upstream, revision, distribution, date, epochSeconds }.
 * Throws when the file does not start with a well-formed Debian changelog entry.
 */
export function readTopEntry(path) {
  const text = readFileSync(path, 'utf8');
  const head = /^(\S+) \(([^)\s]+)\) (\S+); urgency=\S+$/m.exec(text.split('\n')[0] ?? '');
  if (!head) throw new Error(`${path}: first line is not "source (version) distribution; urgency=..."`);
  const trailer = /^ -- (.+ <[^>]+>) {2}(.+)$/m.exec(text);
  if (!trailer) throw new Error(`${path}: no " -- Name <email>  date" trailer line`);
  const epochMs = Date.parse(trailer[2]);
  if (Number.isNaN(epochMs)) throw new Error(`${path}: cannot parse the date ${JSON.stringify(trailer[2])}`);
  const version = head[2];
  const dash = version.lastIndexOf('-');
  if (dash <= 0) throw new Error(`${path}: version ${version} has no Debian revision (expected upstream-revision, e.g. 0.1.0-1)`);
  return {
    source: head[1],
    version,
    upstream: version.slice(0, dash),
    revision: version.slice(dash + 1),
    distribution: head[3],
    maintainer: trailer[1],
    date: trailer[2],
    epochSeconds: Math.floor(epochMs / 1000),
    text,
  };
}
