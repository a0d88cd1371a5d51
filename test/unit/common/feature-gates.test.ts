import test from 'ava';
import { FeatureGateSpecs, parseFeatureGatesFlag } from '../../../common/feature-gates';
import { apiServerGates } from '../../../apiserver/config/feature-gates';
import { FlagError, parseFlags } from '../../../apiserver/config/flags';

test('one framework: unknown and locked gates are refused in upstream\'s words; GA and deprecated gates set explicitly warn', (t) => {
  const specs = new FeatureGateSpecs({ A: { stage: 'ALPHA', default: false }, G: { stage: 'GA', default: true, lockToDefault: true }, D: { stage: 'DEPRECATED', default: false } });
  t.is(specs.check('Z', true), 'unrecognized feature gate: Z');
  t.is(specs.check('G', false), 'cannot set feature gate G to false, feature is locked to true');
  t.is(specs.check('A', true), undefined);
  t.deepEqual(specs.warnings({ G: true, D: true, A: true }), ['Setting GA feature gate G=true. It will be removed in a future release.', 'Setting deprecated feature gate D=true. It will be removed in a future release.']);
  t.deepEqual(specs.resolve({ A: true }), { A: true, G: true, D: false });
  t.deepEqual(parseFeatureGatesFlag('A=true, B=0,C=F'), { A: true, B: false, C: false });
  t.throws(() => parseFeatureGatesFlag('A'), { message: 'missing bool value for A' });
});

test('svc-apiserver\'s gates: the spec\'s, with their defaults, through --feature-gates', (t) => {
  const on = parseFlags([]).featureGates;
  for (const g of ['APIResponseCompression', 'AuthorizeWithSelectors', 'StreamingList', 'StructuredAuthenticationConfiguration', 'StructuredAuthorizationConfiguration']) t.true(on.has(g), g);
  for (const g of ['CBORServingAndStorage', 'AllowUnsafeMalformedObjectDeletion']) t.false(on.has(g), g);
  t.false(parseFlags(['--feature-gates=APIResponseCompression=false']).featureGates.has('APIResponseCompression'));
  t.throws(() => parseFlags(['--feature-gates=StructuredAuthorizationConfiguration=false']), { instanceOf: FlagError, message: /cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true/ });
  t.throws(() => parseFlags(['--feature-gates=Nope=true']), { message: /unrecognized feature gate: Nope/ });
  t.throws(() => parseFlags(['--feature-gates=StructuredAuthenticationConfiguration=false', '--authentication-config=/x']), { message: /--authentication-config can only be used when the StructuredAuthenticationConfiguration feature gate is enabled/ });
  t.deepEqual(parseFlags(['--feature-gates=StructuredAuthorizationConfiguration=true']).featureGateWarnings, ['Setting GA feature gate StructuredAuthorizationConfiguration=true. It will be removed in a future release.']);
  t.regex(apiServerGates.usage(), /CBORServingAndStorage=true\|false \(ALPHA - default=false\)/);
});
