import test from 'ava';
import { versionDocument } from '../../../../apiserver/server/version';

test("/version carries every field of upstream's version.Info, strings all (the Python client's VersionApi requires them)", (t) => {
  const doc = versionDocument({ gitVersion: 'v0.1.0', major: '0', minor: '1', buildDate: '2026-11-25T10:00:00Z' });
  for (const k of ['major', 'minor', 'gitVersion', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform', 'emulationMajor', 'emulationMinor', 'minCompatibilityMajor', 'minCompatibilityMinor']) {
    t.is(typeof doc[k], 'string', k);
  }
  t.like(doc, { major: '0', minor: '1', emulationMajor: '0', emulationMinor: '1', gitVersion: 'v0.1.0', gitCommit: '', gitTreeState: '', buildDate: '2026-11-25T10:00:00Z', compiler: 'tsc' });
  t.regex(doc.platform, /^[a-z0-9]+\/[a-z0-9]+$/);
  // Without a build date, upstream's default for builds that set none.
  t.is(versionDocument({ gitVersion: 'v0.1.0', major: '0', minor: '1' }).buildDate, '1970-01-01T00:00:00Z');
});
