import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { svcBuildDate, svcVersion } from '../../../common/version';

test('the svc version is the package version, found from the compiled tree', (t) => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
  t.is(svcVersion(), `v${pkg.version}`);
  t.is(svcVersion('/'), 'v0.0.0-unknown');
});

test('the build date is the modification time of the running file, RFC 3339 without fractions', (t) => {
  const d = svcBuildDate(__filename);
  t.regex(d ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  t.is(svcBuildDate('/nonexistent/file.js'), undefined);
});
