/** The nftables mode's kernel check (spec Appendix D; upstream's supported.go). */
import test from 'ava';
import { nftablesKernelProblem, parseKernelRelease } from '../../../../agent/proxy/kernel';

test('kernel releases are read as major.minor', (t) => {
  t.deepEqual(parseKernelRelease('6.1.0-18-amd64\n'), [6, 1]);
  t.deepEqual(parseKernelRelease('5.13.0'), [5, 13]);
  t.is(parseKernelRelease('garbage'), undefined);
});

test('5.13 or later runs; older kernels are refused with upstream\'s message; the skip option lowers the floor to 5.4', (t) => {
  t.is(nftablesKernelProblem('5.13.0-1-generic', false), undefined);
  t.is(nftablesKernelProblem('6.18.44', false), undefined);
  t.is(nftablesKernelProblem('5.12.19', false), 'kube-proxy in nftables mode requires kernel 5.13 or later (this kernel is 5.12.19)');
  t.is(nftablesKernelProblem('4.19.0', false), 'kube-proxy in nftables mode requires kernel 5.13 or later (this kernel is 4.19.0)');
  t.is(nftablesKernelProblem('5.4.0-150', true), undefined);
  t.is(nftablesKernelProblem('5.3.18', true), 'kube-proxy in nftables mode requires kernel 5.4 or later (this kernel is 5.3.18)');
  t.regex(nftablesKernelProblem('', false)!, /could not check kernel version/);
});
