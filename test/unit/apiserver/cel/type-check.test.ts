/** Type checking of policy expressions against resource schemas: cel-go's wording and layout, lists, maps, macros, dynamic values. */
import test from 'ava';
import { typeCheckExpression } from '../../../../apiserver/cel/type-check';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';

const deployments = makeBuiltinTypes().find((t) => t.resource === 'deployments')!;
const roots = { object: deployments.schema, oldObject: deployments.schema, params: undefined };

test('an undefined field is reported as cel-go does, with the source line and a caret under the selection', (t) => {
  t.is(typeCheckExpression('object.spec.replicass > 1', roots), "ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^");
  t.is(typeCheckExpression('object.spec.replicas > 1 && oldObject.metadata.name == "x"', roots), '');
});

test('lists, maps and macros: elements and values are followed; selections on lists and scalars are errors', (t) => {
  t.regex(typeCheckExpression('object.spec.template.spec.containers.all(c, c.imagee != "")', roots), /undefined field 'imagee'/);
  t.is(typeCheckExpression('object.spec.template.spec.containers.all(c, c.image != "") && object.metadata.labels.app == "x"', roots), '');
  t.regex(typeCheckExpression('object.spec.template.spec.containers.name', roots), /type 'list' does not support field selection/);
  t.regex(typeCheckExpression('object.spec.template.spec.containers[0].name.first', roots), /type 'string' does not support field selection/);
  t.regex(typeCheckExpression('has(object.spec.nope)', roots), /undefined field 'nope'/);
});

test('dynamic values are not checked: params without a kind, request, variables; unparsable sources give nothing', (t) => {
  t.is(typeCheckExpression('params.anything.at.all && request.userInfo.whatever && variables.x.y', roots), '');
  t.is(typeCheckExpression('object.spec.(', roots), '');
  t.is(typeCheckExpression('a\n  .b.c', { a: deployments.schema }), "ERROR: <input>:2:3: undefined field 'b'\n |   .b.c\n | ..^");
});
