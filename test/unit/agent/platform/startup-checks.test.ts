import test from 'ava';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAgentConfig } from '../../../../agent/config/load';
import { acquireLockFile } from '../../../../agent/platform/lock-file';
import { prepareHost, StartupError } from '../../../../agent/platform/startup-checks';
import type { Log } from '../../../../agent/platform/logger';

const log: Log = { debug() {}, info() {}, warn() {}, error() {} };
const swapOn = 'Filename Type Size Used Priority\n/dev/sda2 partition 2097148 0 -2\n';
const swapOff = 'Filename Type Size Used Priority\n';

function setup(t: import('ava').ExecutionContext) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'swaps-on'), swapOn);
  writeFileSync(join(dir, 'swaps-off'), swapOff);
  return dir;
}

test('lock, swap check and layout succeed on a clean host', async (t) => {
  const dir = setup(t);
  const cfg = await loadAgentConfig([`--root-dir=${dir}/root`, `--lock-file=${dir}/agent.lock`]);
  const host = await prepareHost({ cfg, log, procSwapsPath: join(dir, 'swaps-off') });
  t.teardown(() => host.lock?.release());
  t.deepEqual(host.swap, { swapOn: false, behavior: 'NoSwap' });
  t.true(existsSync(join(dir, 'root', 'checkpoints')));
  await t.throwsAsync(acquireLockFile(join(dir, 'agent.lock')), { message: /is held by another svc-node process/ });
});

test('swap refusal stops start-up before the root dir is touched and frees the lock', async (t) => {
  const dir = setup(t);
  const cfg = await loadAgentConfig([`--root-dir=${dir}/root`, `--lock-file=${dir}/agent.lock`]);
  await t.throwsAsync(prepareHost({ cfg, log, procSwapsPath: join(dir, 'swaps-on') }), {
    instanceOf: StartupError,
    message: /^running with swap on is not supported/,
  });
  t.false(existsSync(join(dir, 'root')));
  const again = await acquireLockFile(join(dir, 'agent.lock'));
  await again.release();
});

test('a second agent is refused with a StartupError', async (t) => {
  const dir = setup(t);
  const held = await acquireLockFile(join(dir, 'agent.lock'));
  t.teardown(() => held.release());
  const cfg = await loadAgentConfig([`--root-dir=${dir}/root`, `--lock-file=${dir}/agent.lock`]);
  await t.throwsAsync(prepareHost({ cfg, log, procSwapsPath: join(dir, 'swaps-off') }), {
    instanceOf: StartupError,
    message: new RegExp(`^lock file ${dir}/agent.lock is held by another svc-node process \\(pid ${process.pid}\\)`),
  });
});

test('swap with an explicit swap behaviour starts', async (t) => {
  const dir = setup(t);
  writeFileSync(join(dir, 'node.yaml'), 'kind: NodeAgentConfiguration\napiVersion: nodeagent.config.svc.io/v1beta1\nmemorySwap: {swapBehavior: LimitedSwap}\n');
  const cfg = await loadAgentConfig([`--root-dir=${dir}/root`, '--lock-file=', `--config=${dir}/node.yaml`]);
  const host = await prepareHost({ cfg, log, procSwapsPath: join(dir, 'swaps-on') });
  t.is(host.lock, undefined);
  t.deepEqual(host.swap, { swapOn: true, behavior: 'LimitedSwap' });
});
