import test from 'ava';
import { resolve } from 'node:path';
import { countCpuList, goArch, osReleaseValue, readMachineInfo } from '../../../../agent/platform/machine';
import type { FsStats } from '../../../../agent/platform/host-fs';

const fixtures = resolve(__dirname, '../../../../../test/fixtures/agent');
const disk: FsStats = { bsize: 4096, blocks: 25_000_000, bavail: 10_000_000, files: 6_000_000, ffree: 5_000_000 };

test('reads capacity and identity from a host tree', async (t) => {
  const seen: string[] = [];
  const info = await readMachineInfo({
    hostRoot: `${fixtures}/host-a`,
    rootDir: '/var/lib/svc-node',
    statfs: (p) => (seen.push(p), Promise.resolve(disk)),
    arch: 'x64',
    cpuFallback: () => 99,
  });
  t.deepEqual(seen, ['/var/lib/svc-node']);
  t.deepEqual(info, {
    cpuCores: 9,
    memoryBytes: 16318252 * 1024,
    ephemeralStorageBytes: 25_000_000 * 4096,
    pidMax: 4194304,
    kernelVersion: '6.1.0-18-amd64',
    osImage: 'Debian GNU/Linux 12 (bookworm)',
    bootID: '0b9c5a1e-2f7d-4a57-9a36-2d5b7f0c1e44',
    machineID: '4c4c4544004b3610805ab4c04f4e3332',
    systemUUID: '',
    architecture: 'amd64',
    operatingSystem: 'linux',
  });
});

test('falls back where older or sparser hosts lack files', async (t) => {
  const info = await readMachineInfo({ hostRoot: `${fixtures}/host-b`, rootDir: '/r', statfs: () => Promise.resolve(disk), arch: 'arm64', cpuFallback: () => 3 });
  t.is(info.cpuCores, 3, 'no /sys cpu list: fallback');
  t.is(info.osImage, 'Example Linux 7 "Core"', '/usr/lib/os-release, single-quoted');
  t.is(info.machineID, '11112222333344445555666677778888', 'dbus machine-id');
  t.is(info.bootID, '');
  t.is(info.architecture, 'arm64');
  t.is(info.kernelVersion, '3.10.0-1160.el7.x86_64');
});

test('a host without /proc/meminfo is an error naming the file', async (t) => {
  await t.throwsAsync(readMachineInfo({ hostRoot: `${fixtures}/no-such-host`, rootDir: '/r', statfs: () => Promise.resolve(disk) }), {
    message: new RegExp(`^cannot read ${fixtures}/no-such-host/proc/meminfo`),
  });
});

test('reads this machine for real', async (t) => {
  const info = await readMachineInfo({ rootDir: '/' });
  t.true(info.cpuCores >= 1);
  t.true(info.memoryBytes > 0);
  t.true(info.ephemeralStorageBytes > 0);
  t.true(info.pidMax > 0);
  t.regex(info.bootID, /^[0-9a-f-]{36}$/);
});

test('Go architecture names', (t) => {
  t.is(goArch('x64'), 'amd64');
  t.is(goArch('arm64'), 'arm64');
  t.is(goArch('ia32'), '386');
  t.is(goArch('ppc64', 'LE'), 'ppc64le');
  t.is(goArch('ppc64', 'BE'), 'ppc64');
  t.is(goArch('s390x'), 's390x');
  t.is(goArch('riscv64'), 'riscv64');
});

test('cpu lists and os-release values', (t) => {
  t.is(countCpuList('0-3,6,8-9\n'), 7);
  t.is(countCpuList('0'), 1);
  t.throws(() => countCpuList('a-b'), { message: /malformed cpu list/ });
  t.is(osReleaseValue('ID=debian\nPRETTY_NAME="A \\"B\\""\n', 'PRETTY_NAME'), 'A "B"');
  t.is(osReleaseValue('ID=debian\n', 'PRETTY_NAME'), undefined);
});
