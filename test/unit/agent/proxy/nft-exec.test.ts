/** Finding the system's nft: never the unrelated `nft` npm puts first on PATH (@vercel/nft). */
import test from 'ava';
import { NftCommand, systemTool } from '../../../../agent/proxy/nft-exec';

test('the system directories win over PATH; the bare name when none has the tool', (t) => {
  t.is(systemTool('nft', (p) => p === '/usr/sbin/nft' || p === '/sbin/nft'), '/usr/sbin/nft');
  t.is(systemTool('conntrack', (p) => p === '/sbin/conntrack'), '/sbin/conntrack');
  t.is(systemTool('nft', () => false), 'nft');
});

test('a refused script rejects with the tool\'s message', async (t) => {
  // `sh -c 'echo ... >&2; exit 1' sh` stands in for nft: the script arguments are ignored.
  const cmd = new NftCommand(['sh', '-c', 'cat >/dev/null; echo "Error: syntax error, unexpected junk" >&2; exit 1', 'sh']);
  const e = await t.throwsAsync(cmd.apply('junk\n'));
  t.regex(e.message, /^nft -f - exited 1: Error: syntax error, unexpected junk/);
});
