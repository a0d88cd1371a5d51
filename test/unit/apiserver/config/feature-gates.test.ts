import test from 'ava';
import { apiServerFeatures, gateOn, parseFeatureGatePairs } from '../../../../apiserver/config/feature-gates';

const on = (pairs: string[]): Set<string> => {
  const r = parseFeatureGatePairs(pairs);
  if ('error' in r) throw new Error(r.error);
  return r.on;
};

test('DeclarativeValidation is beta and on, DeclarativeValidationTakeover beta and off, as upstream 1.33', (t) => {
  const defaults = on([]);
  t.true(defaults.has('DeclarativeValidation'));
  t.false(defaults.has('DeclarativeValidationTakeover'));
  t.true(gateOn(undefined, 'DeclarativeValidation'));
  t.false(gateOn(undefined, 'DeclarativeValidationTakeover'));
  t.true(on(['DeclarativeValidationTakeover=true']).has('DeclarativeValidationTakeover'));
});

test('disabling DeclarativeValidation also disables takeover', (t) => {
  const gates = on(['DeclarativeValidation=false,DeclarativeValidationTakeover=true']);
  t.false(gates.has('DeclarativeValidation'));
  t.false(gates.has('DeclarativeValidationTakeover'));
  t.false(gateOn(gates, 'DeclarativeValidationTakeover'));
});

test('ListFromCacheSnapshot is alpha and off as upstream 1.33, and can be turned on (and off)', (t) => {
  t.false(on([]).has('ListFromCacheSnapshot'));
  t.is(apiServerFeatures.ListFromCacheSnapshot.stage, 'ALPHA');
  t.true(on(['ListFromCacheSnapshot=true']).has('ListFromCacheSnapshot'));
  t.false(on(['ListFromCacheSnapshot=false']).has('ListFromCacheSnapshot'));
});
