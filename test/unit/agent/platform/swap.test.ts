import test from 'ava';
import { join, resolve } from 'node:path';
import { decideSwap, parseProcSwaps, readSwaps } from '../../../../agent/platform/swap';

const fixtures = resolve(__dirname, '../../../../../test/fixtures/agent');

test('reads swap devices from /proc/swaps (KiB sizes, escaped names)', async (t) => {
  const devs = await readSwaps(join(fixtures, 'host-a/proc/swaps'));
  t.deepEqual(devs, [
    { filename: '/dev/nvme0n1p3', type: 'partition', sizeBytes: 2097148 * 1024, usedBytes: 10240 * 1024, priority: -2 },
    { filename: '/var/swap file', type: 'file', sizeBytes: 1048572 * 1024, usedBytes: 0, priority: -3 },
  ]);
});

test('a header-only /proc/swaps means swap is off; a missing file reads as undefined', async (t) => {
  t.deepEqual(parseProcSwaps('Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n'), []);
  t.is(await readSwaps(join(fixtures, 'host-b/proc/swaps')), undefined);
});

const on = parseProcSwaps('Filename Type Size Used Priority\n/dev/sda2 partition 2097148 0 -2\n');

test('swap on + failSwapOn + no swap behaviour: refuse with a message that says how to fix it', (t) => {
  const d = decideSwap(on, { failSwapOn: true, swapBehavior: '' });
  t.false(d.start);
  if (d.start) return;
  t.true(d.message.startsWith('running with swap on is not supported: swap is enabled on /dev/sda2 (2.0Gi).'));
  t.true(d.message.includes('memorySwap.swapBehavior to NoSwap'));
  t.true(d.message.includes('failSwapOn: false'));
});

test('swap on with an explicit swap behaviour or failSwapOn false: start, with the behaviour in force', (t) => {
  t.like(decideSwap(on, { failSwapOn: true, swapBehavior: 'NoSwap' }), { start: true, swapOn: true, behavior: 'NoSwap' });
  t.like(decideSwap(on, { failSwapOn: true, swapBehavior: 'LimitedSwap' }), { start: true, swapOn: true, behavior: 'LimitedSwap' });
  t.like(decideSwap(on, { failSwapOn: false, swapBehavior: '' }), { start: true, swapOn: true, behavior: 'NoSwap' });
});

test('swap off: start whatever the settings', (t) => {
  t.deepEqual(decideSwap([], { failSwapOn: true, swapBehavior: '' }), { start: true, swapOn: false, behavior: 'NoSwap', note: undefined });
  t.like(decideSwap(undefined, { failSwapOn: true, swapBehavior: '' }), { start: true, swapOn: false, note: '/proc/swaps not found; assuming swap is off' });
});
