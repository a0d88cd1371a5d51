/** iptables-restore input: what iptables-save shows of ours is found, replaced, and removed at the clean stop. */
import test from 'ava';
import { buildIptRules } from '../../../../agent/proxy/ipt-rules';
import { emptySaved, parseSave, renderCleanup, renderRestore } from '../../../../agent/proxy/ipt-render';
import { servicePortsOf } from '../../../../agent/proxy/service-ports';
import { SAVED, slice, web, webPorts } from './fixtures';

test('parseSave: our chains (SVC-) in nat and filter, and the rules of other chains that jump into them', (t) => {
  const s = parseSave(SAVED);
  t.deepEqual([...s.chains.nat], ['SVC-SERVICES', 'SVC-SVC-OLDOLDOLDOLDOLDO']);
  t.deepEqual([...s.chains.filter], ['SVC-EXTERNAL-SERVICES']);
  t.deepEqual(s.jumps.nat.map((j) => `${j.chain} ${j.target}`), ['PREROUTING SVC-SERVICES', 'PREROUTING SVC-SERVICES', 'OUTPUT SVC-SVC-OLDOLDOLDOLDOLDO']);
  t.is(s.jumps.filter.length, 1);
});

test('a sync over a previous run\'s rules: stale chains flushed and deleted last, a duplicate or foreign jump into ours deleted, present jumps not inserted again; KUBE- untouched', (t) => {
  const next = buildIptRules('ip', servicePortsOf([web()], [slice('web-a', 'web', [{ ip: '10.244.0.5' }], webPorts)], 'n1'), { clusterCIDRs: [], masqueradeAll: false });
  const input = renderRestore(next, parseSave(SAVED));
  const lines = input.split('\n');
  t.true(lines.includes(':SVC-SVC-OLDOLDOLDOLDOLDO - [0:0]'), 'the stale chain is flushed');
  t.is(lines.at(-3), '-X SVC-SVC-OLDOLDOLDOLDOLDO', 'and deleted at the end of the nat table');
  t.true(lines.indexOf('-X SVC-SVC-OLDOLDOLDOLDOLDO') > lines.indexOf('-D OUTPUT -d 10.0.0.0/8 -j SVC-SVC-OLDOLDOLDOLDOLDO'));
  t.is(lines.filter((l) => l === '-D PREROUTING -m comment --comment "svc-proxy service portals" -j SVC-SERVICES').length, 1, 'the second copy removed, the first kept');
  t.false(lines.some((l) => l.startsWith('-I PREROUTING') || l.startsWith('-I INPUT')), 'jumps present are not inserted again');
  t.true(lines.some((l) => l.startsWith('-I POSTROUTING ')) && lines.some((l) => l.startsWith('-I OUTPUT ') && l.endsWith('-j SVC-SERVICES')));
  t.false(input.includes('KUBE-'), 'upstream\'s chains are not ours');
  t.false(input.includes('SVC-NOT-OURS-TABLE'), 'only the nat and filter tables');
});

test('the clean stop: every jump into ours deleted, every chain of ours flushed and deleted; nothing of ours: no input', (t) => {
  t.is(
    renderCleanup(parseSave(SAVED)),
    [
      '*filter',
      ':SVC-EXTERNAL-SERVICES - [0:0]',
      '-D INPUT -m conntrack --ctstate NEW -m comment --comment "svc-proxy externally-visible service portals" -j SVC-EXTERNAL-SERVICES',
      '-X SVC-EXTERNAL-SERVICES',
      'COMMIT',
      '*nat',
      ':SVC-SERVICES - [0:0]',
      ':SVC-SVC-OLDOLDOLDOLDOLDO - [0:0]',
      '-D PREROUTING -m comment --comment "svc-proxy service portals" -j SVC-SERVICES',
      '-D PREROUTING -m comment --comment "svc-proxy service portals" -j SVC-SERVICES',
      '-D OUTPUT -d 10.0.0.0/8 -j SVC-SVC-OLDOLDOLDOLDOLDO',
      '-X SVC-SERVICES',
      '-X SVC-SVC-OLDOLDOLDOLDOLDO',
      'COMMIT',
      '',
    ].join('\n'),
  );
  t.is(renderCleanup(emptySaved()), '');
  t.is(renderCleanup(parseSave('*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j KUBE-SERVICES\nCOMMIT\n')), '');
});
