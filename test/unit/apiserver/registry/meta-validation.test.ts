import test from 'ava';
import {
  isDns1035Label,
  isDnsLabel,
  isDnsSubdomain,
  isQualifiedName,
  isValidLabelValue,
  validateMetaUpdate,
  validateObjectMeta,
} from '../../../../apiserver/registry/meta-validation';

const sub = { namespaced: true, nameRule: 'subdomain' as const };

test('string helpers follow the upstream grammars', (t) => {
  t.true(isDnsSubdomain('example.com'));
  t.false(isDnsSubdomain('Example.com'));
  t.false(isDnsSubdomain('-a'));
  t.false(isDnsSubdomain('a'.repeat(254)));
  t.true(isDnsLabel('my-name'));
  t.false(isDnsLabel('my.name'));
  t.false(isDnsLabel('a'.repeat(64)));
  t.true(isDns1035Label('abc-1'));
  t.false(isDns1035Label('1abc'));
  t.true(isQualifiedName('example.com/My_Name.1'));
  t.true(isQualifiedName('MyName'));
  t.false(isQualifiedName('a/b/c'));
  t.false(isQualifiedName('/name'));
  t.false(isQualifiedName('Example.com/name'));
  t.false(isQualifiedName('x'.repeat(64)));
  t.true(isValidLabelValue(''));
  t.true(isValidLabelValue('v1.2_3-x'));
  t.false(isValidLabelValue('-bad'));
  t.false(isValidLabelValue('x'.repeat(64)));
});

test('a valid namespaced object passes', (t) => {
  const causes = validateObjectMeta(
    {
      name: 'web-1',
      namespace: 'default',
      labels: { app: 'web', 'svc.io/part-of': '' },
      annotations: { 'example.com/Note': 'x' },
      finalizers: ['example.com/cleanup', 'foregroundDeletion'],
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true }],
    },
    sub,
  );
  t.deepEqual(causes, []);
});

test('subdomain name errors carry the upstream message', (t) => {
  const [c] = validateObjectMeta({ name: 'Bad_Name', namespace: 'default' }, sub);
  t.is(c.field, 'metadata.name');
  t.is(c.reason, 'FieldValueInvalid');
  t.is(
    c.message,
    "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  );
});

test('label names reject dots with upstream wording', (t) => {
  const causes = validateObjectMeta({ name: 'a.b' }, { namespaced: false, nameRule: 'label' });
  t.deepEqual(causes.map((c) => c.message), ['Invalid value: "a.b": must not contain dots']);
});

test('DNS-1035 names must start with a letter', (t) => {
  const causes = validateObjectMeta({ name: '1svc', namespace: 'default' }, { namespaced: true, nameRule: 'dns1035' });
  t.is(causes.length, 1);
  t.true(causes[0].message.includes('a DNS-1035 label must consist of lower case alphanumeric characters'));
});

test('path-segment names only forbid / and % and . / ..', (t) => {
  const opts = { namespaced: false, nameRule: 'path-segment' as const };
  t.deepEqual(validateObjectMeta({ name: 'Anything_Goes:1' }, opts), []);
  t.deepEqual(validateObjectMeta({ name: '..' }, opts).map((c) => c.message), ['Invalid value: "..": may not be \'..\'']);
  t.deepEqual(
    validateObjectMeta({ name: 'a/b%' }, opts).map((c) => c.message),
    ['Invalid value: "a/b%": may not contain \'/\'', 'Invalid value: "a/b%": may not contain \'%\''],
  );
});

test('name or generateName is required; generateName may end with a dash', (t) => {
  const [c] = validateObjectMeta({ namespace: 'default' }, sub);
  t.is(c.field, 'metadata.name');
  t.is(c.message, 'Required value: name or generateName is required');
  t.deepEqual(validateObjectMeta({ generateName: 'web-', namespace: 'default' }, sub), []);
  const bad = validateObjectMeta({ generateName: 'Web-', namespace: 'default' }, sub);
  t.is(bad[0].field, 'metadata.generateName');
});

test('namespace is required for namespaced kinds and forbidden for cluster-scoped ones', (t) => {
  t.deepEqual(
    validateObjectMeta({ name: 'a' }, sub).map((c) => [c.field, c.message]),
    [['metadata.namespace', 'Required value']],
  );
  t.deepEqual(
    validateObjectMeta({ name: 'a', namespace: 'x' }, { namespaced: false, nameRule: 'subdomain' }).map((c) => [c.field, c.message]),
    [['metadata.namespace', 'Forbidden: not allowed on this type']],
  );
  t.is(validateObjectMeta({ name: 'a', namespace: 'Bad' }, sub)[0].field, 'metadata.namespace');
});

test('labels: keys are qualified names, values label values, reported at metadata.labels', (t) => {
  const causes = validateObjectMeta({ name: 'a', namespace: 'd', labels: { 'bad key': 'ok', good: '-bad-' } }, sub);
  t.is(causes.length, 2);
  t.true(causes.every((c) => c.field === 'metadata.labels'));
  t.true(causes[0].message.startsWith('Invalid value: "bad key": name part must consist of alphanumeric characters'));
  t.true(causes[1].message.startsWith('Invalid value: "-bad-": a valid label must be an empty string or consist of'));
});

test('annotations: keys case-insensitive, total size limited to 256 KiB', (t) => {
  t.deepEqual(validateObjectMeta({ name: 'a', namespace: 'd', annotations: { 'Example.COM/Key': 'v' } }, sub), []);
  const big = validateObjectMeta({ name: 'a', namespace: 'd', annotations: { k: 'x'.repeat(256 * 1024) } }, sub);
  t.deepEqual(big.map((c) => [c.field, c.reason, c.message]), [['metadata.annotations', 'FieldValueTooLong', 'Too long: may not be more than 262144 bytes']]);
});

test('finalizers: qualified, standard or domain-prefixed, not orphan with foregroundDeletion', (t) => {
  const causes = validateObjectMeta({ name: 'a', namespace: 'd', finalizers: ['custom', 'orphan', 'foregroundDeletion', 'svc'] }, sub);
  t.deepEqual(
    causes.map((c) => [c.field, c.message]),
    [
      ['metadata.finalizers[0]', 'Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified'],
      ['metadata.finalizers', 'Invalid value: ["custom","orphan","foregroundDeletion","svc"]: finalizer orphan and foregroundDeletion cannot be both set'],
    ],
  );
  t.deepEqual(validateObjectMeta({ name: 'a', namespace: 'd', finalizers: ['custom'] }, { ...sub, strictFinalizers: false }), []);
});

test('ownerReferences need apiVersion, kind, name, uid and at most one controller', (t) => {
  const causes = validateObjectMeta(
    {
      name: 'a',
      namespace: 'd',
      ownerReferences: [
        { apiVersion: '', kind: '', name: '', uid: '' },
        { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: '1', controller: true },
        { apiVersion: 'v1', kind: 'Pod', name: 'q', uid: '2', controller: true },
      ],
    },
    sub,
  );
  t.deepEqual(causes.map((c) => c.field), [
    'metadata.ownerReferences.apiVersion',
    'metadata.ownerReferences.kind',
    'metadata.ownerReferences.name',
    'metadata.ownerReferences.uid',
    'metadata.ownerReferences',
  ]);
  t.true(causes[4].message.endsWith('Only one reference can have Controller set to true. Found "true" in references for Pod/p and Pod/q'));
});

test('managedFields entries need operation Apply or Update', (t) => {
  const [c] = validateObjectMeta({ name: 'a', namespace: 'd', managedFields: [{ manager: 'm', operation: 'Patch' as 'Apply' }] }, sub);
  t.is(c.field, 'metadata.managedFields[0].operation');
  t.is(c.message, 'Invalid value: "Patch": must be `Apply` or `Update`');
});

test('negative generation is invalid', (t) => {
  const [c] = validateObjectMeta({ name: 'a', namespace: 'd', generation: -1 }, sub);
  t.is(c.message, 'Invalid value: -1: must be greater than or equal to 0');
});

test('metadata update: name, namespace, uid and creationTimestamp are immutable', (t) => {
  const old = { name: 'a', namespace: 'd', uid: 'u1', creationTimestamp: '2025-01-01T00:00:00Z' };
  t.deepEqual(validateMetaUpdate({ ...old }, old), []);
  // Omitted uid/creationTimestamp mean "not sent": the server copies them.
  t.deepEqual(validateMetaUpdate({ name: 'a', namespace: 'd' }, old), []);
  const causes = validateMetaUpdate({ name: 'b', namespace: 'e', uid: 'u2', creationTimestamp: '2025-02-01T00:00:00Z' }, old);
  t.deepEqual(
    causes.map((c) => [c.field, c.message]),
    [
      ['metadata.name', 'Invalid value: "b": field is immutable'],
      ['metadata.namespace', 'Invalid value: "e": field is immutable'],
      ['metadata.uid', 'Invalid value: "u2": field is immutable'],
      ['metadata.creationTimestamp', 'Invalid value: "2025-02-01T00:00:00Z": field is immutable'],
    ],
  );
});

test('metadata update: no new finalizers once deletion started', (t) => {
  const old = { name: 'a', deletionTimestamp: '2025-01-01T00:00:00Z', finalizers: ['x.io/a'] };
  t.deepEqual(validateMetaUpdate({ name: 'a', finalizers: [] }, old), []);
  const [c] = validateMetaUpdate({ name: 'a', finalizers: ['x.io/a', 'x.io/b'] }, old);
  t.is(c.field, 'metadata.finalizers');
  t.is(c.message, 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"x.io/b"}');
});
