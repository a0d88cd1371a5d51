import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentVersion } from '../../../../agent/node/version';

test('the agent version is the package version, found from the compiled tree', (t) => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
  t.is(agentVersion(), `v${pkg.version}`);
  t.is(agentVersion('/'), 'v0.0.0-unknown');
});
