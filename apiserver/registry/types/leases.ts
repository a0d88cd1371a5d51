import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { qualifiedName } from '../common-validation';
import { forbidden, invalid, notSupported } from '../field-errors';
import { rec, str, strAt } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { described, int32, microTime, obj, ptr, str as s } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** coordination.svc.io/v1 Lease: node heartbeats and leader election. */

const STRATEGIES: readonly string[] = ['OldestEmulationVersion'];

export const leaseSchema = withMeta('k8s.io.api.coordination.v1.Lease', {
  spec: [
    2,
    described('Spec contains the specification of the Lease.', obj('k8s.io.api.coordination.v1.LeaseSpec', {
      holderIdentity: [1, ptr(s('The identity of the holder of a current lease.'))],
      leaseDurationSeconds: [2, ptr(int32('Duration that candidates for a lease need to wait to force acquire it.'))],
      acquireTime: [3, microTime('When the current lease was acquired.')],
      renewTime: [4, microTime('When the current holder last updated the lease.')],
      leaseTransitions: [5, ptr(int32('The number of transitions of a lease between holders.'))],
      strategy: [6, ptr(s('The strategy for picking the leader for coordinated leader election.'))],
      preferredHolder: [7, ptr(s('Signals to a lease holder that the lease has a more optimal holder.'))],
    })),
  ],
});

/** Upstream ValidateLeaseSpec. */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  if (typeof spec.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds <= 0) {
    out.push(invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (typeof spec.leaseTransitions === 'number' && spec.leaseTransitions < 0) {
    out.push(invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  }
  const strategy = str(spec.strategy);
  if (strategy) {
    if (strategy.includes('/')) out.push(...qualifiedName('spec.strategy', strategy));
    else if (!STRATEGIES.includes(strategy)) out.push(notSupported('spec.strategy', strategy, STRATEGIES));
  }
  if (str(spec.preferredHolder) && !strategy) out.push(forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  return out;
}

export function leaseColumns(now: Now): TableColumn[] {
  return [column('Holder', 'string', 'The identity of the holder of a current lease.', (o) => strAt(o, 'spec', 'holderIdentity')), ageColumn(now)];
}

export function makeLeaseType(now: Now = Date.now): ResourceType {
  return {
    group: 'coordination.svc.io',
    version: 'v1',
    resource: 'leases',
    singular: 'lease',
    kind: 'Lease',
    listKind: 'LeaseList',
    namespaced: true,
    schema: leaseSchema,
    hasStatus: false,
    // Upstream does not track generation for leases; renewals every 10 s would only churn it.
    specFields: [],
    tableColumns: leaseColumns(now),
    validate,
  };
}

export const leaseType: ResourceType = makeLeaseType();
