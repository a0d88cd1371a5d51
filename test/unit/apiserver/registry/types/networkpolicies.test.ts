import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { makeNetworkPolicyType } from '../../../../../apiserver/registry/types/networkpolicies';
import { ago, cells, fields, now } from './fixtures';

const type = makeNetworkPolicyType(now);
const np = (spec: Record<string, unknown>): KObject => ({ metadata: { name: 'p', namespace: 'default', creationTimestamp: ago(120_000) }, spec });

test('networkpolicy: defaults policyTypes from the rules and port protocol TCP (upstream SetDefaults_NetworkPolicy)', (t) => {
  const ingressOnly = np({ podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] });
  type.defaults!(ingressOnly);
  t.deepEqual(ingressOnly.spec, { podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'TCP' }] }], policyTypes: ['Ingress'] });
  const withEgress = np({ podSelector: {}, egress: [{}] });
  type.defaults!(withEgress);
  t.deepEqual((withEgress.spec as { policyTypes: string[] }).policyTypes, ['Ingress', 'Egress']);
  const explicit = np({ podSelector: {}, policyTypes: ['Egress'] });
  type.defaults!(explicit);
  t.deepEqual((explicit.spec as { policyTypes: string[] }).policyTypes, ['Egress']);
  t.deepEqual(cells(type, np({ podSelector: { matchLabels: { app: 'web' } } })), { 'Pod-Selector': 'app=web', Age: '2m' });
  t.deepEqual(cells(type, np({ podSelector: {} })), { 'Pod-Selector': '<none>', Age: '2m' });
});

test('networkpolicy: peers, ports and port ranges, ipBlock and policyTypes validated as upstream', (t) => {
  const ok = np({
    podSelector: { matchLabels: { app: 'web' } },
    ingress: [{ ports: [{ protocol: 'TCP', port: 80, endPort: 90 }, { protocol: 'UDP', port: 'dns' }], from: [{ podSelector: {}, namespaceSelector: { matchLabels: { team: 'a' } } }, { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }] }],
    egress: [{ to: [{ ipBlock: { cidr: 'fd00::/8' } }] }],
    policyTypes: ['Ingress', 'Egress'],
  });
  t.deepEqual(type.validate!(ok), []);
  const bad = np({
    podSelector: { matchLabels: { 'bad key!': 'x' } },
    ingress: [
      {
        ports: [{ protocol: 'ICMP', port: 80 }, { protocol: 'TCP', port: 'http', endPort: 90 }, { protocol: 'TCP', port: 90, endPort: 80 }, { protocol: 'TCP', endPort: 80 }],
        from: [{}, { ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }, { ipBlock: { cidr: '10.0.0.0/33' } }, { ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.0.0/16', '192.168.0.0/24'] } }],
      },
    ],
    policyTypes: ['Ingress', 'Sideways'],
  });
  t.deepEqual(fields(type.validate!(bad)), [
    'spec.podSelector.matchLabels',
    'spec.ingress[0].ports[0].protocol',
    'spec.ingress[0].ports[1].endPort',
    'spec.ingress[0].ports[2].endPort',
    'spec.ingress[0].ports[3].endPort',
    'spec.ingress[0].from[0]',
    'spec.ingress[0].from[1]',
    'spec.ingress[0].from[2].ipBlock.cidr',
    'spec.ingress[0].from[3].ipBlock.except[0]',
    'spec.ingress[0].from[3].ipBlock.except[1]',
    'spec.policyTypes[1]',
  ]);
  t.deepEqual(fields(type.validate!(np({ podSelector: {}, policyTypes: ['Ingress', 'Egress', 'Ingress'] }))), ['spec.policyTypes']);
});
