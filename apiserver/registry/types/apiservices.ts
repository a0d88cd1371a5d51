import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '../../api/name-validation';
import { messages } from '../common-validation';
import { forbidden, invalid, required } from '../field-errors';
import { rec, str } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { bool, bytes, described, int32, mapList, obj, ptr, str as s, time } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/**
 * apiregistration.svc.io/v1 APIService (and apiregistration.k8s.io/v1, as every group): which
 * server serves one group version. No service: served here (the built-in groups are such local
 * APIServices, as upstream). A service: requests for the group version are proxied to it
 * (aggregator/). Message and field numbers are upstream's kube-aggregator generated.proto.
 */
const PKG = 'k8s.io.kube_aggregator.pkg.apis.apiregistration.v1';

export const apiServiceSchema = withMeta(`${PKG}.APIService`, {
  spec: [
    2,
    described('Spec contains information for locating and communicating with a server.', obj(`${PKG}.APIServiceSpec`, {
      service: [1, described('The Service the API server is reached through; absent: served locally.', obj(`${PKG}.ServiceReference`, {
        namespace: [1, s('The namespace of the service.')],
        name: [2, s('The name of the service.')],
        port: [3, ptr(int32('The port of the service (1-65535, default 443).'))],
      }))],
      group: [2, s('The API group name this server hosts.')],
      version: [3, s('The API version this server hosts, for example "v1".')],
      insecureSkipTLSVerify: [4, bool('Disables TLS certificate verification when communicating with this server; strongly discouraged.')],
      caBundle: [5, bytes('A PEM encoded CA bundle used to validate the server\'s serving certificate.')],
      groupPriorityMinimum: [7, int32('The priority this group should have at least; higher is preferred by clients.')],
      versionPriority: [8, int32('The ordering of this version inside its group; higher first.')],
    }, { required: ['groupPriorityMinimum', 'versionPriority'] })),
  ],
  status: [
    3,
    described('Status contains derived information about an API server.', obj(`${PKG}.APIServiceStatus`, {
      conditions: [
        1,
        mapList(
          obj(`${PKG}.APIServiceCondition`, {
            type: [1, s('Type of the condition (Available).')],
            status: [2, s('True, False or Unknown.')],
            lastTransitionTime: [3, time('Last time the condition transitioned.')],
            reason: [4, s('A one-word reason for the last transition.')],
            message: [5, s('Details of the last transition.')],
          }, { required: ['type', 'status'] }),
          ['type'],
          'Current service state of the APIService.',
        ),
      ],
    })),
  ],
});

/** Upstream's ValidateAPIService (kube-aggregator's validation). */
function validate(o: KObject): Cause[] {
  const spec = rec(o.spec) ?? {};
  const out: Cause[] = [];
  const group = str(spec.group) ?? '';
  const version = str(spec.version) ?? '';
  const name = o.metadata.name ?? '';
  const service = rec(spec.service);
  if (name !== `${version}.${group}`) out.push(invalid('metadata.name', name, `must be ${version}.${group}`));
  if (group) out.push(...messages('spec.group', group, dns1123SubdomainErrors(group)));
  else if (service) out.push(required('spec.group', 'only local APIServices may have an empty group'));
  if (!version) out.push(required('spec.version', ''));
  else out.push(...messages('spec.version', version, dns1123LabelErrors(version)));
  const gpm = spec.groupPriorityMinimum;
  if (typeof gpm !== 'number' || gpm <= 0 || gpm > 20000) out.push(invalid('spec.groupPriorityMinimum', gpm ?? 0, 'must be positive and less than 20000'));
  const vp = spec.versionPriority;
  if (typeof vp !== 'number' || vp <= 0 || vp > 1000) out.push(invalid('spec.versionPriority', vp ?? 0, 'must be positive and less than 1000'));
  if (!service) {
    if (spec.insecureSkipTLSVerify) out.push(invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    if (spec.caBundle) out.push(invalid('spec.caBundle', '...', 'local APIServices may not have a caBundle'));
  } else {
    if (!str(service.namespace)) out.push(required('spec.service.namespace', ''));
    if (!str(service.name)) out.push(required('spec.service.name', ''));
    const port = service.port;
    if (port !== undefined && (typeof port !== 'number' || port < 1 || port > 65535)) out.push(invalid('spec.service.port', port, 'port is not valid: must be between 1 and 65535, inclusive'));
    if (spec.insecureSkipTLSVerify && spec.caBundle) out.push(forbidden('spec.insecureSkipTLSVerify', 'may not be true if caBundle is present'));
  }
  return out;
}

function defaults(o: KObject): void {
  const service = rec(rec(o.spec)?.service);
  if (service && service.port === undefined) service.port = 443;
}

function columns(now: Now): TableColumn[] {
  return [
    column('Service', 'string', 'The reference to the service that hosts this API endpoint.', (o) => {
      const svc = rec(rec(o.spec)?.service);
      return svc ? `${str(svc.namespace) ?? ''}/${str(svc.name) ?? ''}` : 'Local';
    }),
    column('Available', 'string', 'Whether this service is available.', (o) => {
      const c = (rec(o.status)?.conditions as unknown[] | undefined)?.map((x) => rec(x) ?? {}).find((x) => x.type === 'Available');
      if (!c) return 'Unknown';
      return c.status === 'True' ? 'True' : `${str(c.status) ?? 'Unknown'} (${str(c.reason) ?? ''})`;
    }),
    ageColumn(now),
  ];
}

export function makeApiServiceType(now: Now = Date.now): ResourceType {
  return {
    group: 'apiregistration.svc.io',
    version: 'v1',
    resource: 'apiservices',
    singular: 'apiservice',
    kind: 'APIService',
    listKind: 'APIServiceList',
    namespaced: false,
    schema: apiServiceSchema,
    hasStatus: true,
    tableColumns: columns(now),
    validate,
    defaults,
  };
}

/** The Available condition of an APIService, or undefined. */
export function availableCondition(o: KObject): Record<string, unknown> | undefined {
  return (rec(o.status)?.conditions as unknown[] | undefined)?.map((x) => rec(x) ?? {}).find((x) => x.type === 'Available');
}

