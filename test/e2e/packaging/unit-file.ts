/** A reader for systemd unit files, enough for tests to look at the settings the units ship with. */
import { readFileSync } from 'node:fs';

/** Section -> key -> every value given, in order (systemd keys may repeat). */
export type UnitFile = Map<string, Map<string, string[]>>;

/** Parses unit-file text: [Section] headers, Key=Value lines, # and ; comments, backslash continuations. */
export function parseUnit(text: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string[]> | undefined;
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = unit.get(header[1]) ?? new Map();
      unit.set(header[1], section);
      continue;
    }
    const eq = line.indexOf('=');
    if (!section || eq <= 0) throw new Error(`not a unit-file line: ${JSON.stringify(raw)}`);
    const key = line.slice(0, eq).trim();
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return unit;
}

/** Reads and parses a unit file. */
export function readUnit(path: string): UnitFile {
  return parseUnit(readFileSync(path, 'utf8'));
}

/** Every value of Section/Key (empty when unset). */
export function values(unit: UnitFile, section: string, key: string): string[] {
  return unit.get(section)?.get(key) ?? [];
}

/** The effective value of Section/Key: the last one given, or undefined. */
export function value(unit: UnitFile, section: string, key: string): string | undefined {
  return values(unit, section, key).at(-1);
}

/** Splits an ExecStart= command line on whitespace (the units use no quoting). */
export function execArgs(unit: UnitFile): string[] {
  const exec = value(unit, 'Service', 'ExecStart');
  if (!exec) throw new Error('no ExecStart=');
  return exec.split(/\s+/);
}
