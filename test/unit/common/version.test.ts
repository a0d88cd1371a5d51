import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { svcVersion } from '../../../common/version';

test('the svc version is the package version, found from the compiled tree', (t) => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
  t.is(svcVersion(), `v${pkg.version}`);
  t.is(svcVersion('/'), 'v0.0.0-unknown');
});
