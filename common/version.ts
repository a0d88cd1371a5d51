/** The svc release both binaries report (svc-node puts it in Node.status.nodeInfo.kubeletVersion), taken from the package it ships in. */
import { readFileSync } from 'node:fs';
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
