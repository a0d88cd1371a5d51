import test from 'ava';
import { checkNodeLabels, parseLabelsFlag } from '../../../../agent/config/labels';

test('parses k=v pairs, allowing empty values', (t) => {
  t.deepEqual(parseLabelsFlag('a=b,example.com/team=x, empty='), { a: 'b', 'example.com/team': 'x', empty: '' });
  t.throws(() => parseLabelsFlag('novalue'), { message: '"novalue" must be formatted as key=value' });
  t.throws(() => parseLabelsFlag('=v'), { message: '"=v" must be formatted as key=value' });
});

test('accepts valid labels and the allowed svc.io ones', (t) => {
  t.deepEqual(
    checkNodeLabels({ env: 'prod', 'example.com/rack': 'r-1', 'topology.svc.io/zone': 'z1', 'node.svc.io/pool': 'a', 'x.node.svc.io/y': 'b' }),
    [],
  );
});

test('rejects malformed keys and values', (t) => {
  t.regex(checkNodeLabels({ '-bad': 'x' })[0], /invalid label key "-bad"/);
  t.regex(checkNodeLabels({ 'Bad_Prefix/x': 'x' })[0], /prefix part must be a lowercase RFC 1123 subdomain/);
  t.regex(checkNodeLabels({ a: 'b c' })[0], /invalid label value "b c"/);
  t.regex(checkNodeLabels({ a: 'x'.repeat(64) })[0], /invalid label value/);
});

test('refuses labels the control plane reserves in the svc.io namespace', (t) => {
  const p = checkNodeLabels({ 'node-role.svc.io/master': '', 'svc.io/custom': 'x', 'svc.io/os': 'linux' });
  t.is(p.length, 1);
  t.regex(p[0], /^unknown 'svc.io' labels specified: \[node-role.svc.io\/master svc.io\/custom\]/);
});

test('the allow-list is the API server\'s NodeRestriction one: kubelet.svc.io labels are the node\'s (upstream kubelet.kubernetes.io)', (t) => {
  t.deepEqual(checkNodeLabels({ 'kubelet.svc.io/role': 'edge', 'svc-node.svc.io/x': 'y' }), []);
  t.regex(checkNodeLabels({ 'node-restriction.svc.io/x': 'y' })[0], /must begin with an allowed prefix \(kubelet\.svc\.io, svc-node\.svc\.io, node\.svc\.io\)/);
});

test('upstream spellings: the kubelet labels under kubernetes.io are allowed, other kubernetes.io and k8s.io labels refused (issue 17)', (t) => {
  t.deepEqual(checkNodeLabels({ 'kubernetes.io/os': 'linux', 'node.kubernetes.io/pool': 'a', 'topology.kubernetes.io/zone': 'z1', 'kubelet.kubernetes.io/x': 'y' }), []);
  const p = checkNodeLabels({ 'node-role.kubernetes.io/worker': '', 'k8s.io/x': 'y', 'node-restriction.kubernetes.io/pool': 'a' });
  t.is(p.length, 1);
  t.regex(p[0], /\[node-role\.kubernetes\.io\/worker k8s\.io\/x node-restriction\.kubernetes\.io\/pool\]/);
});
