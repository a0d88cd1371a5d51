/**
 * RouteTable (agent/podnet/route-table.ts) against the real `ip` of iproute2, in a network
 * namespace of the test's own (root): what it adds carries protocol 157, list() reads back only
 * those, deleting a route that is gone is not an error, and routes of other protocols are never
 * listed nor deleted. The namespace is removed in after.always.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import test from 'ava';
import { RouteTable, type IpRunner } from '../../../agent/podnet';

const run = promisify(execFile);
const ns = `svcpn-rt-${randomBytes(4).toString('hex')}`;
const ip = async (...args: string[]) => (await run('ip', ['netns', 'exec', ns, 'ip', ...args], { timeout: 10_000 })).stdout;
/** The agent's runner, pointed into the namespace. */
const inNs: IpRunner = (args) =>
  new Promise((resolve, reject) => {
    execFile('ip', ['netns', 'exec', ns, 'ip', ...args], { timeout: 10_000, encoding: 'utf8' }, (err, stdout, stderr) => (err ? reject(new Error(`ip ${args.join(' ')}: ${stderr.trim() || err.message}`)) : resolve(stdout)));
  });

test.before(async () => {
  if (process.getuid?.() !== 0) throw new Error('the route table e2e must run as root (it makes a network namespace)');
  await run('ip', ['netns', 'add', ns]);
  // A veth pair inside the namespace (the dummy module may be missing): eth0 carries the link.
  await ip('link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth1');
  await ip('addr', 'add', '192.0.2.1/24', 'dev', 'eth0');
  await ip('link', 'set', 'eth1', 'up');
  await ip('link', 'set', 'eth0', 'up');
});

test.after.always(async () => {
  await run('ip', ['netns', 'del', ns]).catch(() => undefined);
});

test.serial('routes it adds are marked, listed back, replaced in place and deleted; others are left alone', async (t) => {
  const table = new RouteTable(inNs);
  await ip('route', 'add', '10.99.0.0/16', 'via', '192.0.2.254', 'proto', 'static');
  t.deepEqual(await table.list(), []);
  await table.replace({ dst: '10.244.1.0/24', via: '192.0.2.2' });
  await table.replace({ dst: '10.244.2.0/24', via: '192.0.2.3' });
  await table.replace({ dst: '10.244.1.0/24', via: '192.0.2.4' });
  t.deepEqual(
    (await table.list()).sort((a, b) => a.dst.localeCompare(b.dst)),
    [
      { dst: '10.244.1.0/24', via: '192.0.2.4' },
      { dst: '10.244.2.0/24', via: '192.0.2.3' },
    ],
  );
  t.regex(await ip('route', 'show', '10.244.1.0/24'), /via 192\.0\.2\.4 dev eth0 proto 157/);
  await table.delete('10.244.1.0/24');
  await t.notThrowsAsync(table.delete('10.244.1.0/24'), 'a route already gone is not an error');
  await t.notThrowsAsync(table.delete('10.99.0.0/16'), "another protocol's route does not match");
  t.regex(await ip('route', 'show'), /10\.99\.0\.0\/16 via 192\.0\.2\.254 dev eth0 proto static/);
  t.deepEqual(await table.list(), [{ dst: '10.244.2.0/24', via: '192.0.2.3' }]);
});

test.serial('a gateway off every link is refused with the kernel message', async (t) => {
  const table = new RouteTable(inNs);
  const err = await t.throwsAsync(table.replace({ dst: '10.244.3.0/24', via: '198.51.100.7' }));
  t.regex(err.message, /^ip -4 route replace 10\.244\.3\.0\/24 via 198\.51\.100\.7 proto 157: .*(unreachable|invalid gateway)/i);
});
