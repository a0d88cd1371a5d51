/** The iptables mode's writer: when it reads iptables-save, when it restores, and the clean stop. */
import test from 'ava';
import { IptablesWriter, type IptablesRunner } from '../../../../agent/proxy/ipt-writer';
import type { Family } from '../../../../agent/proxy/nft-model';
import { servicePortsOf } from '../../../../agent/proxy/service-ports';
import { SAVED, slice, web, webPorts } from './fixtures';

class FakeIptables implements IptablesRunner {
  readonly calls: string[] = [];
  saved: Record<Family, string> = { ip: '', ip6: '' };
  failNext = false;
  save(f: Family): Promise<string> {
    this.calls.push(`save ${f}`);
    return Promise.resolve(this.saved[f]);
  }
  restore(f: Family, input: string): Promise<void> {
    this.calls.push(`restore ${f}`);
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new Error('iptables-restore --noflush exited 2: line 7 failed'));
    }
    this.saved[f] = input; // close enough for the writer: what it applied is what save shows
    return Promise.resolve();
  }
}

test('the writer: save read at start and after a failure only; an unchanged family not restored again; cleanUp reads save and removes what it shows', async (t) => {
  const fake = new FakeIptables();
  const w = new IptablesWriter(fake, ['ip', 'ip6'], { clusterCIDRs: [], masqueradeAll: false });
  const ports = servicePortsOf([web()], [slice('web-a', 'web', [{ ip: '10.244.0.5' }], webPorts)], 'n1');
  t.like(await w.sync(ports), { full: true });
  t.deepEqual(fake.calls.splice(0), ['save ip', 'restore ip', 'save ip6', 'restore ip6']);
  t.deepEqual(await w.sync(ports), { full: false, bytes: 0 });
  t.deepEqual(fake.calls.splice(0), [], 'nothing changed: nothing run');
  const fewer = servicePortsOf([web()], [], 'n1');
  fake.failNext = true;
  await t.throwsAsync(w.sync(fewer), { message: /line 7 failed/ });
  w.reset();
  fake.calls.splice(0);
  t.like(await w.sync(fewer), { full: true });
  t.deepEqual(fake.calls.splice(0), ['save ip', 'restore ip', 'save ip6', 'restore ip6'], 'after a failure iptables-save is read again');
  t.regex(fake.saved.ip, /^-X SVC-SVC-/m, 'the chains of the endpoint gone are deleted');
  fake.saved.ip = SAVED;
  await w.cleanUp();
  t.deepEqual(fake.calls.slice(0, 2), ['save ip', 'restore ip']);
  t.regex(fake.saved.ip, /^-X SVC-SVC-OLDOLDOLDOLDOLDO$/m);
});

test('a later sync writes only the chains that changed (upstream\'s partial sync); other Services\' chains and the unchanged base chains are left alone', async (t) => {
  const fake = new FakeIptables();
  const w = new IptablesWriter(fake, ['ip'], { clusterCIDRs: [], masqueradeAll: false });
  const other = web({ clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.11'] });
  other.metadata.name = 'other';
  const services = [web(), other];
  const before = [slice('web-a', 'web', [{ ip: '10.244.0.5' }], webPorts), slice('other-a', 'other', [{ ip: '10.244.9.9' }], webPorts)];
  t.like(await w.sync(servicePortsOf(services, before, 'n1')), { full: true });
  const after = [slice('web-a', 'web', [{ ip: '10.244.0.6' }], webPorts), before[1]];
  t.like(await w.sync(servicePortsOf(services, after, 'n1')), { full: false });
  const input = fake.saved.ip;
  const declared = input.split('\n').filter((l) => l.startsWith(':')).map((l) => l.slice(1, -8));
  t.is(declared.length, 3, `the web service chain, its new and its old endpoint chain: ${declared.join(' ')}`);
  t.true(declared.every((c) => /^SVC-(SVC|SEP)-/.test(c)));
  t.regex(input, /^-A SVC-SEP-\S+ .*--to-destination 10\.244\.0\.6:8080$/m);
  t.regex(input, /^-X SVC-SEP-/m);
  t.false(input.includes('10.244.9.9'), 'the other Service untouched');
  t.false(input.includes('*filter'), 'nothing changed in the filter table');
});
