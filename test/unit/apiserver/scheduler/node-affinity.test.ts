import test from 'ava';
import { matchesNodeAffinity, requirementMatches, termMatches } from '../../../../apiserver/scheduler/node-affinity';
import { node, pod } from './objects';

const labels: Record<string, string> = { zone: 'a', disk: 'ssd', cores: '16', name: 'x' };
const lookup = (k: string) => labels[k];

const reqs: Array<[string, Record<string, unknown>, boolean | undefined]> = [
  ['In with the value', { key: 'zone', operator: 'In', values: ['a', 'b'] }, true],
  ['In without the value', { key: 'zone', operator: 'In', values: ['b'] }, false],
  ['In on a missing label', { key: 'gpu', operator: 'In', values: ['yes'] }, false],
  ['NotIn with another value', { key: 'zone', operator: 'NotIn', values: ['b'] }, true],
  ['NotIn with the value', { key: 'zone', operator: 'NotIn', values: ['a'] }, false],
  ['NotIn on a missing label', { key: 'gpu', operator: 'NotIn', values: ['yes'] }, true],
  ['Exists on a present label', { key: 'disk', operator: 'Exists' }, true],
  ['Exists on a missing label', { key: 'gpu', operator: 'Exists' }, false],
  ['DoesNotExist on a missing label', { key: 'gpu', operator: 'DoesNotExist' }, true],
  ['DoesNotExist on a present label', { key: 'disk', operator: 'DoesNotExist' }, false],
  ['Gt below the label', { key: 'cores', operator: 'Gt', values: ['8'] }, true],
  ['Gt equal to the label', { key: 'cores', operator: 'Gt', values: ['16'] }, false],
  ['Lt above the label', { key: 'cores', operator: 'Lt', values: ['32'] }, true],
  ['Lt below the label', { key: 'cores', operator: 'Lt', values: ['4'] }, false],
  ['Gt on a non-integer label', { key: 'zone', operator: 'Gt', values: ['1'] }, false],
  ['Gt on a missing label', { key: 'gpu', operator: 'Gt', values: ['1'] }, false],
  ['Gt with a non-integer value is malformed', { key: 'cores', operator: 'Gt', values: ['x'] }, undefined],
  ['Gt with two values is malformed', { key: 'cores', operator: 'Gt', values: ['1', '2'] }, undefined],
  ['In without values is malformed', { key: 'zone', operator: 'In', values: [] }, undefined],
  ['Exists with values is malformed', { key: 'zone', operator: 'Exists', values: ['a'] }, undefined],
  ['an unknown operator is malformed', { key: 'zone', operator: 'Like', values: ['a'] }, undefined],
];
for (const [name, req, want] of reqs) {
  test(`requirement: ${name}`, (t) => {
    t.is(requirementMatches(req, lookup), want);
  });
}

const n1 = node('n1', { labels: { zone: 'a', disk: 'ssd' } });

const terms: Array<[string, Record<string, unknown>, boolean]> = [
  ['all expressions hold', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'disk', operator: 'Exists' }] }, true],
  ['one expression fails', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'gpu', operator: 'Exists' }] }, false],
  ['an empty term matches nothing', {}, false],
  ['matchFields metadata.name In', { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }, true],
  ['matchFields metadata.name NotIn', { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] }, false],
  ['matchFields with another field matches nothing', { matchFields: [{ key: 'metadata.uid', operator: 'In', values: ['n1'] }] }, false],
  ['matchFields and matchExpressions are ANDed', { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }], matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }, false],
  ['a malformed expression fails the term', { matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['z'] }] }, false],
];
for (const [name, term, want] of terms) {
  test(`term: ${name}`, (t) => {
    t.is(termMatches(term, n1), want);
  });
}

const affinity = (...nodeSelectorTerms: unknown[]) => ({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms } } } });

const pods: Array<[string, Record<string, unknown>, boolean]> = [
  ['no selector and no affinity', {}, true],
  ['nodeSelector matching', { nodeSelector: { zone: 'a' } }, true],
  ['nodeSelector with another value', { nodeSelector: { zone: 'b' } }, false],
  ['nodeSelector on a missing label', { nodeSelector: { gpu: '' } }, false],
  ['terms are ORed', affinity({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }, { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }), true],
  ['no term matches', affinity({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }), false],
  ['an empty term list matches nothing', affinity(), false],
  ['nodeSelector and affinity must both hold', { nodeSelector: { zone: 'b' }, ...affinity({ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }) }, false],
  ['preferred terms alone do not filter', { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] } }] } } }, true],
];
for (const [name, spec, want] of pods) {
  test(`pod affinity: ${name}`, (t) => {
    t.is(matchesNodeAffinity(pod('p', { spec }), n1), want);
  });
}
