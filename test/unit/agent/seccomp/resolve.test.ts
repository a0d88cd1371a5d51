/** Seccomp profile resolution: inheritance, privileged, the seccompDefault setting, Localhost paths and their errors. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { effectiveProfile, SeccompProfileError, SeccompResolver } from '../../../../agent/seccomp/resolve';

test('effective profile: container over pod over node default; privileged is always Unconfined', (t) => {
  const pod = { type: 'Localhost', localhostProfile: 'p.json' };
  const own = { type: 'RuntimeDefault' };
  t.deepEqual(effectiveProfile(pod, own, false, false), own);
  t.deepEqual(effectiveProfile(pod, undefined, false, false), pod);
  t.deepEqual(effectiveProfile(undefined, undefined, false, false), { type: 'Unconfined' });
  t.deepEqual(effectiveProfile(undefined, undefined, false, true), { type: 'RuntimeDefault' });
  t.deepEqual(effectiveProfile(pod, own, true, true), { type: 'Unconfined' });
});

test('Localhost profiles resolve under the seccomp directory, are read and validated; errors name the file', async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'svc-seccomp-'));
  const dir = path.join(root, 'seccomp');
  try {
    await mkdir(path.join(dir, 'team'), { recursive: true });
    await writeFile(path.join(dir, 'team', 'ok.json'), JSON.stringify({ defaultAction: 'SCMP_ACT_LOG' }));
    await writeFile(path.join(dir, 'bad.json'), JSON.stringify({ defaultAction: 'SCMP_ACT_ALLOW', defaultErrnoRet: 1 }));
    const r = new SeccompResolver({ profileRoot: dir, seccompDefault: false });
    t.deepEqual(await r.resolve({ containerProfile: { type: 'Localhost', localhostProfile: 'team/ok.json' } }), { profileType: 'Localhost', localhostRef: path.join(dir, 'team', 'ok.json') });
    t.deepEqual(await r.resolve({ podProfile: { type: 'Localhost', localhostProfile: 'team/ok.json' }, kind: 'ephemeral' }), { profileType: 'Localhost', localhostRef: path.join(dir, 'team', 'ok.json') });
    t.deepEqual(await r.resolve({ podProfile: { type: 'Localhost', localhostProfile: 'missing.json' }, privileged: true }), { profileType: 'Unconfined' }, 'privileged never reads the file');

    const missing = await t.throwsAsync(r.resolve({ containerProfile: { type: 'Localhost', localhostProfile: 'missing.json' } }), { instanceOf: SeccompProfileError });
    t.is(missing?.message, `cannot load seccomp profile "${path.join(dir, 'missing.json')}": no such file or directory`);
    t.is((missing).file, path.join(dir, 'missing.json'));
    await t.throwsAsync(r.resolve({ containerProfile: { type: 'Localhost', localhostProfile: 'bad.json' } }), {
      message: `invalid seccomp profile "${path.join(dir, 'bad.json')}": defaultErrnoRet: only allowed when defaultAction is SCMP_ACT_ERRNO or SCMP_ACT_TRACE`,
    });
    await t.throwsAsync(r.resolve({ containerProfile: { type: 'Localhost', localhostProfile: 'team' } }), { message: /is a directory/ });
    await t.throwsAsync(r.resolve({ containerProfile: { type: 'Localhost' } }), { message: /needs localhostProfile/ });
    await t.throwsAsync(r.resolve({ containerProfile: { type: 'Localhost', localhostProfile: '/etc/x.json' } }), { message: /must be relative/ });
    await t.throwsAsync(r.resolve({ containerProfile: { type: 'Localhost', localhostProfile: 'team/../../x.json' } }), { message: /leaves the seccomp directory/ });
    await t.throwsAsync(r.resolve({ containerProfile: { type: 'Fancy' } }), { message: /unsupported seccomp profile type "Fancy"/ });

    // The sandbox falls back to RuntimeDefault so the error surfaces per container.
    t.deepEqual(await r.resolveSandbox({ type: 'Localhost', localhostProfile: 'missing.json' }), { profileType: 'RuntimeDefault' });
    t.deepEqual(await r.resolveSandbox(undefined), { profileType: 'Unconfined' });
    t.deepEqual(await new SeccompResolver({ profileRoot: dir, seccompDefault: true }).resolveSandbox(undefined), { profileType: 'RuntimeDefault' });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
