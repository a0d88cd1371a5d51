import { cidrContains, parseCidr } from '../../../common/cidr';
import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { formatLabelSelector } from '../../api/label-selector';
import { cidrErrors } from '../../api/name-validation';
import { labelSelectorSchema, withMeta } from '../common-schemas';
import { messages, portNumOrName, protocol, validateLabelSelector } from '../common-validation';
import { child, forbidden, index, invalid, notSupported, required } from '../field-errors';
import { rec, recs, str, strs, type JsonMap } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, described, int32, intOrStr, obj, ptr, str as s } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** networking.svc.io/v1 NetworkPolicy (upstream networking.k8s.io/v1; its generated.proto message names and numbers). Stored and validated; enforcement is the node proxy's. */

const V1 = 'k8s.io.api.networking.v1';
const POLICY_TYPES: readonly string[] = ['Ingress', 'Egress'];

const portSchema = obj(`${V1}.NetworkPolicyPort`, {
  protocol: [1, ptr(s('The protocol (TCP, UDP, or SCTP) which traffic must match. Defaults to TCP.'))],
  port: [2, intOrStr('The port on the given protocol: a number or a named port on a pod.')],
  endPort: [3, ptr(int32('With a numeric port, the last port of an inclusive range.'))],
});

const peerSchema = obj(`${V1}.NetworkPolicyPeer`, {
  podSelector: [1, described('Selects pods (in the namespaces namespaceSelector selects, else the policy’s own).', labelSelectorSchema)],
  namespaceSelector: [2, described('Selects namespaces by their labels.', labelSelectorSchema)],
  ipBlock: [
    3,
    described(
      'A CIDR block; exclusive with the selectors.',
      obj(`${V1}.IPBlock`, {
        cidr: [1, s('The IP block, e.g. 192.168.1.0/24 or 2001:db8::/64.')],
        except: [2, atomicList(s(), 'CIDRs inside cidr that are excluded.')],
      }),
    ),
  ],
});

export const networkPolicySchema = withMeta(`${V1}.NetworkPolicy`, {
  spec: [
    2,
    described(
      'The desired behaviour for this NetworkPolicy.',
      obj(`${V1}.NetworkPolicySpec`, {
        podSelector: [1, described('The pods this policy applies to; empty selects all pods of the namespace.', labelSelectorSchema)],
        ingress: [2, atomicList(obj(`${V1}.NetworkPolicyIngressRule`, { ports: [1, atomicList(portSchema, 'Ports this rule allows traffic to; empty or absent means every port.')], from: [2, atomicList(peerSchema, 'Sources this rule allows traffic from; empty or absent means every source.')] }), 'Ingress rules of the selected pods.')],
        egress: [3, atomicList(obj(`${V1}.NetworkPolicyEgressRule`, { ports: [1, atomicList(portSchema, 'Ports this rule allows traffic to; empty or absent means every port.')], to: [2, atomicList(peerSchema, 'Destinations this rule allows traffic to; empty or absent means every destination.')] }), 'Egress rules of the selected pods.')],
        policyTypes: [4, atomicList(s(), 'The rule types the policy relates to: Ingress, Egress.')],
      }),
    ),
  ],
});

/** Upstream SetDefaults_NetworkPolicy: port protocol TCP; policyTypes Ingress, plus Egress when egress rules exist. */
function defaults(o: KObject): void {
  const spec = rec(o.spec);
  if (!spec) return;
  for (const rule of [...recs(spec.ingress), ...recs(spec.egress)]) for (const p of recs(rule.ports)) if (!p.protocol) p.protocol = 'TCP';
  if (strs(spec.policyTypes).length === 0) spec.policyTypes = recs(spec.egress).length ? ['Ingress', 'Egress'] : ['Ingress'];
}

function validatePort(p: JsonMap, path: string): Cause[] {
  const out = protocol(child(path, 'protocol'), p.protocol ?? 'TCP');
  if (p.port === undefined || p.port === null) {
    if (p.endPort !== undefined && p.endPort !== null) out.push(forbidden(child(path, 'endPort'), 'may not be set when `port` is not specified'));
    return out;
  }
  out.push(...portNumOrName(child(path, 'port'), p.port));
  if (p.endPort === undefined || p.endPort === null) return out;
  if (typeof p.port === 'string') out.push(forbidden(child(path, 'endPort'), 'may not be set when `port` is non-numeric'));
  else if (typeof p.endPort !== 'number' || typeof p.port !== 'number' || p.endPort < p.port) out.push(invalid(child(path, 'endPort'), p.endPort, 'must be greater than or equal to `port`'));
  else if (p.endPort > 65535) out.push(invalid(child(path, 'endPort'), p.endPort, 'must be between 1 and 65535, inclusive'));
  return out;
}

function validateIpBlock(b: JsonMap, path: string): Cause[] {
  const cidr = str(b.cidr) ?? '';
  if (!cidr) return [required(child(path, 'cidr'))];
  const errs = cidrErrors(cidr);
  if (errs.length) return messages(child(path, 'cidr'), cidr, errs);
  const block = parseCidr(cidr);
  const out: Cause[] = [];
  strs(b.except).forEach((e, i) => {
    const p = index(child(path, 'except'), i);
    const ee = cidrErrors(e);
    if (ee.length) {
      out.push(...messages(p, e, ee));
      return;
    }
    const inner = parseCidr(e);
    // Upstream: each except must be a strict subset of cidr.
    if (inner.prefix <= block.prefix || !cidrContains(block, e.split('/')[0])) out.push(invalid(p, e, 'must be a strict subset of `cidr`'));
  });
  return out;
}

/** Upstream ValidateNetworkPolicyPeer: exactly one kind of peer (selectors together, or an ipBlock). */
function validatePeer(peer: JsonMap, path: string): Cause[] {
  const out: Cause[] = [];
  let kinds = 0;
  if (peer.podSelector) {
    kinds++;
    out.push(...validateLabelSelector(peer.podSelector, child(path, 'podSelector')));
  }
  if (peer.namespaceSelector) {
    kinds++;
    out.push(...validateLabelSelector(peer.namespaceSelector, child(path, 'namespaceSelector')));
  }
  if (peer.ipBlock) {
    kinds++;
    out.push(...validateIpBlock(rec(peer.ipBlock)!, child(path, 'ipBlock')));
  }
  if (kinds === 0) out.push(required(path, 'must specify a peer'));
  else if (peer.ipBlock && kinds > 1) out.push(forbidden(path, 'may not specify more than 1 peer type'));
  return out;
}

/** Upstream ValidateNetworkPolicySpec. */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out = validateLabelSelector(spec.podSelector ?? {}, 'spec.podSelector');
  for (const [field, peers] of [['ingress', 'from'], ['egress', 'to']] as const) {
    recs(spec[field]).forEach((rule, i) => {
      const rp = index(child('spec', field), i);
      recs(rule.ports).forEach((p, j) => out.push(...validatePort(p, index(child(rp, 'ports'), j))));
      recs(rule[peers]).forEach((peer, j) => out.push(...validatePeer(peer, index(child(rp, peers), j))));
    });
  }
  const types = strs(spec.policyTypes);
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t)) out.push(notSupported(index('spec.policyTypes', i), t, POLICY_TYPES));
  });
  if (types.length > 2) out.push(invalid('spec.policyTypes', types, 'may not specify more than two policyTypes'));
  return out;
}

export function networkPolicyColumns(now: Now): TableColumn[] {
  return [column('Pod-Selector', 'string', 'The pods this policy applies to.', (o) => formatLabelSelector(rec(o.spec)?.podSelector)), ageColumn(now)];
}

export function makeNetworkPolicyType(now: Now = Date.now): ResourceType {
  return {
    group: 'networking.svc.io',
    version: 'v1',
    resource: 'networkpolicies',
    singular: 'networkpolicy',
    kind: 'NetworkPolicy',
    listKind: 'NetworkPolicyList',
    namespaced: true,
    shortNames: ['netpol'],
    schema: networkPolicySchema,
    hasStatus: false,
    tableColumns: networkPolicyColumns(now),
    defaults,
    validate,
  };
}
