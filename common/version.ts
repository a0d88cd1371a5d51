/** The svc release both binaries report (svc-node puts it in Node.status.nodeInfo.kubeletVersion), taken from the package it ships in. */
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Walks up from `from` to the svc package.json and returns "v<version>"; "v0.0.0-unknown" when none is found. */
export function svcVersion(from: string = __dirname): string {
  let dir = from;
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'svc' && pkg.version) return `v${pkg.version}`;
    } catch {
      // not here; keep walking up
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return 'v0.0.0-unknown';
}

/**
 * When this build was made, RFC 3339 (/version's buildDate): the modification time of the file
 * that runs (the compiled main.js, or the packaged bundle), which the build writes. Undefined when
 * it cannot be read.
 */
export function svcBuildDate(file: string | undefined = require.main?.filename): string | undefined {
  if (!file) return undefined;
  try {
    return statSync(file).mtime.toISOString().replace(/\.\d+Z$/, 'Z');
  } catch {
    return undefined;
  }
}
