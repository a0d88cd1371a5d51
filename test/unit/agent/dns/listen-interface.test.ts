/** The dummy interface for the DNS address: the ip commands, an interface left from an earlier run reused, failures named. */
import test from 'ava';
import { ListenInterface, ListenInterfaceError, type CommandRunner } from '../../../../agent/dns/listen-interface';

function recorder(answers: Record<string, { code: number; stdout?: string; stderr: string }> = {}) {
  const calls: string[] = [];
  const run: CommandRunner = (file, args) => {
    const line = `${file} ${args.join(' ')}`;
    calls.push(line);
    const a = answers[line] ?? { code: 0, stderr: '' };
    return Promise.resolve({ stdout: '', ...a });
  };
  return { calls, run };
}

test('ensure: a dummy interface with the address (/32, /128 for IPv6), up; remove deletes it', async (t) => {
  const r = recorder({ 'ip -d link show dev svc-dns': { code: 0, stdout: '5: svc-dns: <BROADCAST,NOARP,UP,LOWER_UP> mtu 1500\n    link/ether 00:00:00:00:00:00\n    dummy addrgenmode eui64\n', stderr: '' } });
  const i = new ListenInterface('svc-dns', '169.254.20.10', r.run);
  await i.ensure();
  await i.remove();
  t.deepEqual(r.calls, ['ip link add svc-dns type dummy', 'ip addr replace 169.254.20.10/32 dev svc-dns', 'ip link set svc-dns up', 'ip -d link show dev svc-dns', 'ip link del svc-dns']);
  const v6 = recorder();
  await new ListenInterface('svc-dns', 'fd00::a', v6.run).ensure();
  t.is(v6.calls[1], 'ip addr replace fd00::a/128 dev svc-dns');
});

test('an interface left by an earlier run is reused; one already gone is fine to remove; other failures name the step', async (t) => {
  const r = recorder({
    'ip link add svc-dns type dummy': { code: 2, stderr: 'RTNETLINK answers: File exists\n' },
    'ip -d link show dev svc-dns': { code: 1, stderr: 'Device "svc-dns" does not exist.\n' },
  });
  const i = new ListenInterface('svc-dns', '169.254.20.10', r.run);
  await t.notThrowsAsync(i.ensure());
  await t.notThrowsAsync(i.remove());
  t.is(r.calls.at(-1), 'ip -d link show dev svc-dns', 'already gone: nothing to delete');
  const lo = recorder({
    'ip link add lo type dummy': { code: 2, stderr: 'RTNETLINK answers: File exists\n' },
    'ip -d link show dev lo': { code: 0, stdout: '1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536\n    link/loopback 00:00:00:00:00:00\n', stderr: '' },
  });
  const onLo = new ListenInterface('lo', '169.254.20.10', lo.run);
  await onLo.ensure();
  await onLo.remove();
  t.is(lo.calls.at(-1), 'ip addr del 169.254.20.10/32 dev lo', 'not a dummy interface: only the address is taken away');
  const bad = recorder({ 'ip addr replace 169.254.20.10/32 dev svc-dns': { code: 2, stderr: 'RTNETLINK answers: Operation not permitted\n' } });
  const e = await t.throwsAsync(new ListenInterface('svc-dns', '169.254.20.10', bad.run).ensure(), { instanceOf: ListenInterfaceError });
  t.is(e?.message, 'cannot put 169.254.20.10 on svc-dns: RTNETLINK answers: Operation not permitted');
});
