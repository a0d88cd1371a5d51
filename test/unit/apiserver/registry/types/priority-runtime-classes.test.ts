import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makePriorityClassType, SYSTEM_PRIORITY_CLASSES } from '../../../../../apiserver/registry/types/priorityclasses';
import { makeRuntimeClassType } from '../../../../../apiserver/registry/types/runtimeclasses';
import { ago, cells, now } from './fixtures';

const pc = makePriorityClassType(now);
const rc = makeRuntimeClassType(now);
const msgs = (causes: ReadonlyArray<{ field?: string; message: string }>) => causes.map((c) => `${c.field ?? ''}: ${c.message}`);
const cls = (name: string, value: number, extra: Record<string, unknown> = {}): KObject => {
  const o: KObject = { metadata: { name }, value, ...extra };
  pc.defaults!(o);
  return o;
};

test('priorityclass: defaults preemptionPolicy; user values up to 1e9; the table as kubectl shows it', (t) => {
  const o = cls('high', 1_000_000_000, { globalDefault: true });
  t.is(o.preemptionPolicy, 'PreemptLowerPriority');
  t.deepEqual(pc.validate!(o), []);
  t.deepEqual(pc.validate!(cls('low', -5)), []);
  t.deepEqual(msgs(pc.validate!(cls('too-high', 1_000_000_001))), ['value: Forbidden: maximum allowed value of a user defined priority is 1000000000']);
  t.deepEqual(msgs(pc.validate!(cls('p', 1, { preemptionPolicy: 'Sometimes' }))), ['preemptionPolicy: Unsupported value: "Sometimes": supported values: "Never", "PreemptLowerPriority"']);
  t.deepEqual(msgs(pc.validate!({ metadata: { name: 'p' } })), ['value: Required value']);
  t.deepEqual(cells(pc, { ...cls('high', 7, { preemptionPolicy: 'Never' }), metadata: { name: 'high', creationTimestamp: ago(5000) } }), { Value: 7, 'Global-Default': false, Age: '5s', PreemptionPolicy: 'Never' });
});

test('priorityclass: system- names are reserved to the two system classes with their values', (t) => {
  for (const s of SYSTEM_PRIORITY_CLASSES) t.deepEqual(pc.validate!(cls(s.name, s.value)), [], s.name);
  t.deepEqual(SYSTEM_PRIORITY_CLASSES.map((s) => [s.name, s.value]), [['system-node-critical', 2000001000], ['system-cluster-critical', 2000000000]]);
  const prefix = "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: ";
  t.deepEqual(msgs(pc.validate!(cls('system-mine', 10))), [`${prefix}system-mine is not a known system priority class`]);
  t.deepEqual(msgs(pc.validate!(cls('system-node-critical', 10))), [`${prefix}value of system-node-critical PriorityClass must be 2000001000`]);
  t.deepEqual(msgs(pc.validate!(cls('system-cluster-critical', 2000000000, { globalDefault: true }))), [`${prefix}globalDefault of system-cluster-critical PriorityClass must be false`]);
});

test('priorityclass: value and preemptionPolicy are immutable; description and globalDefault may change', (t) => {
  const old = cls('high', 100);
  t.deepEqual(pc.validateUpdate!({ ...old, description: 'x', globalDefault: true }, old), []);
  t.deepEqual(msgs(pc.validateUpdate!({ ...old, value: 101 }, old)), ['value: Forbidden: may not be changed in an update.']);
  t.deepEqual(msgs(pc.validateUpdate!({ ...old, preemptionPolicy: 'Never' }, old)), ['preemptionPolicy: Invalid value: "Never": field is immutable']);
});

test('runtimeclass: handler is a DNS label and immutable; overhead and scheduling validated as upstream', (t) => {
  const ok: KObject = { metadata: { name: 'kata' }, handler: 'kata-qemu', overhead: { podFixed: { cpu: '250m' } }, scheduling: { nodeSelector: { sandbox: 'kata' }, tolerations: [{ key: 'k', operator: 'Exists' }] } };
  t.deepEqual(rc.validate!(ok), []);
  t.deepEqual(cells(rc, { ...ok, metadata: { name: 'kata', creationTimestamp: ago(60_000) } }), { Handler: 'kata-qemu', Age: '60s' });
  t.regex(msgs(rc.validate!({ metadata: { name: 'x' }, handler: 'Run_C' }))[0], /^handler: Invalid value: "Run_C": a lowercase RFC 1123 label must consist of/);
  t.regex(msgs(rc.validate!({ metadata: { name: 'x' }, handler: '' }))[0], /^handler: Invalid value: ""/);
  t.deepEqual(msgs(rc.validate!({ ...ok, overhead: { podFixed: { memory: '-1' } } })), ['overhead.podFixed[memory]: Invalid value: "-1": must be greater than or equal to 0']);
  const dup = { key: 'k', operator: 'Exists' };
  t.deepEqual(msgs(rc.validate!({ ...ok, scheduling: { tolerations: [dup, dup] } })), ['scheduling.tolerations[1]: Duplicate value: {"key":"k","operator":"Exists"}']);
  t.regex(msgs(rc.validate!({ ...ok, scheduling: { nodeSelector: { 'bad key!': 'x' } } }))[0], /^scheduling.nodeSelector: Invalid value: "bad key!"/);
  t.deepEqual(msgs(rc.validateUpdate!({ ...ok, handler: 'runc' }, ok)), ['handler: Invalid value: "runc": field is immutable']);
  t.deepEqual(rc.validateUpdate!({ ...ok, overhead: {} }, ok), []);
});
