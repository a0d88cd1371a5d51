/**
 * The DNS address on a real interface, inside a network namespace this test creates (and removes
 * in after.always), under `ip netns exec` so the host's links are never touched. The namespace's
 * `lo` (the dummy driver is not in every kernel, e.g. this CI's): ensure puts the address on it, a
 * second ensure is fine, remove takes only the address away and leaves lo.
 */
import test from 'ava';
import { join } from 'node:path';
import { run } from '../../helpers/real-clients';

const ns = `svc-dns-e2e-${process.pid}`;
const lib = join(__dirname, '..', '..', '..', 'agent', 'dns', 'listen-interface.js');

test.before(async () => {
  const r = await run('ip', ['netns', 'add', ns]);
  if (r.code !== 0) throw new Error(`ip netns add: ${r.stderr}`);
});
test.after.always(async () => {
  await run('ip', ['netns', 'del', ns]);
});

const inNs = (script: string) => run('ip', ['netns', 'exec', ns, process.execPath, '-e', `const { ListenInterface } = require(${JSON.stringify(lib)}); (async () => { ${script} })().catch((e) => { console.error(e.message); process.exit(1); });`]);

test('ensure puts the address on lo and brings it up; again is fine; remove takes only the address', async (t) => {
  const make = await inNs(`const i = new ListenInterface('lo', '169.254.20.10'); await i.ensure(); await i.ensure();`);
  t.is(make.code, 0, make.stderr);
  t.regex((await run('ip', ['-n', ns, '-o', 'addr', 'show', 'dev', 'lo'])).stdout, /inet 169\.254\.20\.10\/32/);
  t.regex((await run('ip', ['-n', ns, '-o', 'link', 'show', 'dev', 'lo'])).stdout, /[<,]UP[,>]/);
  const del = await inNs(`await new ListenInterface('lo', '169.254.20.10').remove();`);
  t.is(del.code, 0, del.stderr);
  const after = await run('ip', ['-n', ns, '-o', 'addr', 'show', 'dev', 'lo']);
  t.notRegex(after.stdout, /169\.254\.20\.10/);
  t.regex(after.stdout, /inet 127\.0\.0\.1/, 'lo itself stays');
});
