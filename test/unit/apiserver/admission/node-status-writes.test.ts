import test from 'ava';
import fc from 'fast-check';
import { forbiddenStatusChange, NODE_STATUS_WRITES, type NodeStatusWriteRule } from '../../../../apiserver/admission/node-status-writes';
import type { KObject } from '../../../../apiserver/api/types';

const base = (): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', uid: 'u', labels: { app: 'web' }, annotations: { a: '1' }, managedFields: [{ manager: 'm' }], generation: 1 },
  spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
  status: { phase: 'Running', resourceClaimStatuses: [{ name: 'gpu' }], capacity: { storage: '1Gi' } },
});

test('every rule names only paths under metadata and status; refused paths lie inside writable ones', (t) => {
  for (const [sub, rule] of Object.entries(NODE_STATUS_WRITES) as [string, NodeStatusWriteRule][]) {
    for (const p of [...rule.writable, ...rule.refused]) t.regex(p, /^(metadata|status)(\.|$)/, `${sub}: ${p}`);
    for (const r of rule.refused) t.true(rule.writable.some((w) => r.startsWith(`${w}.`)), `${sub}: ${r} is refused inside a writable path`);
  }
});

test('the first differing field outside the rule is named; fields the store sets are not compared', (t) => {
  const pods = NODE_STATUS_WRITES['pods/status'];
  const changed = (f: (o: KObject) => void) => {
    const o = base();
    f(o);
    return forbiddenStatusChange(pods, o, base());
  };
  t.is(changed(() => undefined), undefined);
  t.is(changed((o) => ((o.status as Record<string, unknown>).phase = 'Failed')), undefined);
  t.is(changed((o) => delete (o.status as Record<string, unknown>).capacity), undefined);
  t.is(changed((o) => (o.metadata.managedFields = [])), undefined);
  t.is(changed((o) => (o.metadata.generation = 7)), undefined);
  t.is(changed((o) => (o.metadata.resourceVersion = '9')), undefined);
  t.is(changed((o) => (o.metadata.labels = { app: 'db' })), 'metadata.labels');
  t.is(changed((o) => delete o.metadata.annotations), 'metadata.annotations');
  t.is(changed((o) => ((o.status as Record<string, unknown>).resourceClaimStatuses = null)), 'status.resourceClaimStatuses');
  t.is(changed((o) => (o.status = 'gone')), 'status.resourceClaimStatuses', 'a status that is not an object loses the refused field');
  t.is(changed((o) => (o.spec = {})), 'spec');
  t.is(changed((o) => (o.extra = 1)), 'extra');
  // Labels of a pod with none before: added is a change.
  const bare = base();
  delete bare.metadata.labels;
  t.is(forbiddenStatusChange(pods, base(), bare), 'metadata.labels');
  // Under nodes/status labels and annotations may change, the rest of the metadata not.
  const nodes = NODE_STATUS_WRITES['nodes/status'];
  const n = base();
  n.metadata.labels = {};
  n.metadata.annotations = { b: '2' };
  t.is(forbiddenStatusChange(nodes, n, base()), undefined);
  n.metadata.finalizers = ['f'];
  t.is(forbiddenStatusChange(nodes, n, base()), 'metadata.finalizers');
  // Claims: only capacity, conditions and the allocated fields of the status.
  const claims = NODE_STATUS_WRITES['persistentvolumeclaims/status'];
  const c = base();
  (c.status as Record<string, unknown>).capacity = { storage: '2Gi' };
  t.is(forbiddenStatusChange(claims, c, base()), undefined);
  (c.status as Record<string, unknown>).phase = 'Lost';
  t.is(forbiddenStatusChange(claims, c, base()), 'status.phase');
});

// Property: whatever JSON a status write carries, a change inside the status (outside the refused
// field) is allowed, and a change of any other top-level field or of the metadata's labels is
// named with that path.
const json = fc.jsonValue({ maxDepth: 3 });
const key = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !k.includes('.') && k !== '__proto__');

test('property: status changes pass, any other change is named', (t) => {
  const rule = NODE_STATUS_WRITES['pods/status'];
  fc.assert(
    fc.property(key, json, (k, v) => {
      if (k === 'resourceClaimStatuses') return;
      const o = base();
      (o.status as Record<string, unknown>)[k] = v;
      t.is(forbiddenStatusChange(rule, o, base()), undefined);
    }),
    { numRuns: 200 },
  );
  fc.assert(
    fc.property(key, json, (k, v) => {
      if (['metadata', 'status', 'apiVersion', 'kind'].includes(k)) return;
      const o = base();
      o[k] = v;
      const old = base();
      if (JSON.stringify(old[k]) === JSON.stringify(v)) return;
      t.is(forbiddenStatusChange(rule, o, old), k);
    }),
    { numRuns: 200 },
  );
  fc.assert(
    fc.property(fc.dictionary(key, fc.string({ maxLength: 5 }), { maxKeys: 4 }), (labels) => {
      const o = base();
      o.metadata.labels = labels;
      const same = JSON.stringify(labels) === JSON.stringify(base().metadata.labels);
      t.is(forbiddenStatusChange(rule, o, base()), same ? undefined : 'metadata.labels');
    }),
    { numRuns: 200 },
  );
});
