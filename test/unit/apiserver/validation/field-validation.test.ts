import test from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import { checkFields, parseFieldValidation } from '../../../../apiserver/validation/field-validation';

test('parseFieldValidation defaults to Warn and accepts the three names', (t) => {
  t.is(parseFieldValidation(null), 'Warn');
  t.is(parseFieldValidation(''), 'Warn');
  t.is(parseFieldValidation('Ignore'), 'Ignore');
  t.is(parseFieldValidation('Warn'), 'Warn');
  t.is(parseFieldValidation('Strict'), 'Strict');
});

test('parseFieldValidation rejects anything else with 400 listing the allowed values', (t) => {
  for (const bad of ['strict', 'Loud', ' Warn']) {
    const e = t.throws(() => parseFieldValidation(bad), { instanceOf: ApiError });
    t.is(e?.code, 400);
    t.is(e?.reason, 'BadRequest');
    t.is(e?.message, `fieldValidation: Unsupported value: ${JSON.stringify(bad)}: supported values: "Ignore", "Warn", "Strict"`);
  }
});

const problems = { unknown: ['.spec.foo', '.spec.containers[0].bar'], duplicates: ['.metadata.name'] };

test('Warn returns one upstream-worded warning per field', (t) => {
  t.deepEqual(checkFields(problems, 'Warn'), [
    'unknown field "spec.foo"',
    'unknown field "spec.containers[0].bar"',
    'duplicate field "metadata.name"',
  ]);
});

test('Ignore returns nothing', (t) => {
  t.deepEqual(checkFields(problems, 'Ignore'), []);
});

test('Strict throws one 400 listing every field', (t) => {
  const e = t.throws(() => checkFields(problems, 'Strict'), { instanceOf: ApiError });
  t.is(e?.code, 400);
  t.is(e?.reason, 'BadRequest');
  t.is(
    e?.message,
    'strict decoding error: unknown field "spec.foo", unknown field "spec.containers[0].bar", duplicate field "metadata.name"',
  );
});

test('no problems: nothing to warn about and Strict passes', (t) => {
  const none = { unknown: [], duplicates: [] };
  t.deepEqual(checkFields(none, 'Strict'), []);
  t.deepEqual(checkFields(none, 'Warn'), []);
});
