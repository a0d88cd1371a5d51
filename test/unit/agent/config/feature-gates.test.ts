import test from 'ava';
import {
  FeatureGates,
  checkFeatureGate,
  featureGateWarnings,
  knownFeatures,
  parseFeatureGatesFlag,
} from '../../../../agent/config/feature-gates';

test('registry has the gates the agent reads with the spec stages and defaults', (t) => {
  const g = new FeatureGates();
  t.true(g.enabled('ContainerCheckpoint'));
  t.is(knownFeatures.ContainerCheckpoint.stage, 'BETA');
  t.true(g.enabled('SystemdWatchdog'));
  t.true(g.enabled('GracefulNodeShutdown'));
  t.true(g.enabled('NodeSwap'));
  t.false(g.enabled('KubeletInUserNamespace'));
  t.is(knownFeatures.KubeletInUserNamespace.stage, 'ALPHA');
});

test('overrides change only the named gates', (t) => {
  const g = new FeatureGates({ ContainerCheckpoint: false, KubeletInUserNamespace: true });
  t.false(g.enabled('ContainerCheckpoint'));
  t.true(g.enabled('KubeletInUserNamespace'));
  t.true(g.enabled('NodeSwap'));
  t.is(Object.keys(g.snapshot()).length, Object.keys(knownFeatures).length);
});

test('unknown gates and locked GA gates are refused with upstream wording', (t) => {
  t.is(checkFeatureGate('NoSuchGate', true), 'unrecognized feature gate: NoSuchGate');
  t.is(checkFeatureGate('SidecarContainers', false), 'cannot set feature gate SidecarContainers to false, feature is locked to true');
  t.is(checkFeatureGate('SidecarContainers', true), undefined);
  t.is(checkFeatureGate('NodeSwap', false), undefined);
});

test('setting a GA gate explicitly warns', (t) => {
  t.deepEqual(featureGateWarnings({ SidecarContainers: true, NodeSwap: true }), [
    'Setting GA feature gate SidecarContainers=true. It will be removed in a future release.',
  ]);
});

test('--feature-gates parses key=bool pairs like pflag mapStringBool', (t) => {
  t.deepEqual(parseFeatureGatesFlag('A=true,B=false, C=1 ,D=F'), { A: true, B: false, C: true, D: false });
  t.deepEqual(parseFeatureGatesFlag(''), {});
  t.throws(() => parseFeatureGatesFlag('A'), { message: 'missing bool value for A' });
  t.throws(() => parseFeatureGatesFlag('A=yes'), { message: /^invalid value of A=yes/ });
});
