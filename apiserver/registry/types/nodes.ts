import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { messages, resourceList } from '../common-validation';
import { child, duplicate, forbidden, index, invalid, notSupported, required } from '../field-errors';
import { cidrErrors, labelValueErrors, qualifiedNameErrors } from '../../api/name-validation';
import { get, rec, recs, str, strAt, strs } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { canonicalizeQuantities } from '../canonical-quantities';
import { any, atomicList, bool, int32, int64, mapList, obj, quantityMap, setList, str as s, strEnum, time } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** core/v1 Node. */

export const TAINT_EFFECTS: readonly string[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
/** Upstream node-role.kubernetes.io/<role> and kubernetes.io/role labels that kubectl shows as ROLES. */
export const NODE_ROLE_PREFIX = 'node-role.svc.io/';
export const NODE_ROLE_LABEL = 'svc.io/role';

const taintSchema = obj(
  { key: s(), value: s(), effect: strEnum(TAINT_EFFECTS), timeAdded: time() },
  { required: ['key', 'effect'] },
);

const nodeConditionSchema = obj(
  {
    type: s(),
    status: s(),
    lastHeartbeatTime: time(),
    lastTransitionTime: time(),
    reason: s(),
    message: s(),
  },
  { required: ['type'] },
);

export const nodeSchema = withMeta({
  spec: obj({
    podCIDR: s('PodCIDR represents the pod IP range assigned to the node.'),
    podCIDRs: setList(s(), 'The IP ranges assigned to the node for usage by Pods on that node.'),
    providerID: s(),
    unschedulable: bool('Unschedulable controls node schedulability of new pods.'),
    // Upstream taints have no patchMergeKey (listType atomic): a patch replaces the whole list.
    taints: atomicList(taintSchema, "If specified, the node's taints."),
    configSource: any('Deprecated.'),
    externalID: s('Deprecated.'),
  }),
  status: obj({
    capacity: quantityMap('Capacity represents the total resources of a node.'),
    allocatable: quantityMap('Allocatable represents the resources of a node that are available for scheduling.'),
    phase: s('Deprecated.'),
    conditions: mapList(nodeConditionSchema, ['type'], 'Conditions is an array of current observed node conditions.'),
    addresses: mapList(obj({ type: s(), address: s() }, { required: ['type'] }), ['type'], 'List of addresses reachable to the node.'),
    daemonEndpoints: obj({ kubeletEndpoint: obj({ Port: int32() }) }),
    nodeInfo: obj({
      machineID: s(),
      systemUUID: s(),
      bootID: s(),
      kernelVersion: s(),
      osImage: s(),
      containerRuntimeVersion: s(),
      kubeletVersion: s(),
      kubeProxyVersion: s(),
      operatingSystem: s(),
      architecture: s(),
      swap: obj({ capacity: int64() }),
    }),
    images: atomicList(obj({ names: atomicList(s()), sizeBytes: int64() })),
    volumesInUse: atomicList(s()),
    volumesAttached: atomicList(obj({ name: s(), devicePath: s() })),
    config: any(),
    runtimeHandlers: atomicList(any()),
    features: obj({ supplementalGroupsPolicy: bool() }),
    declaredFeatures: atomicList(s(), 'Alpha: features the node declares it supports.'),
  }),
});

/** NodeSystemInfo's string fields, which upstream always serializes (no omitempty). */
const NODE_INFO_STRINGS = ['machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion', 'kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture'];

/**
 * Upstream SetDefaults_NodeStatus (allocatable defaults to capacity) plus the v1 conversion that
 * keeps spec.podCIDR equal to spec.podCIDRs[0]. A nodeInfo gets every string field upstream's
 * always carries (empty when unset): the Python client refuses a Node whose nodeInfo lacks one
 * (kubeProxyVersion, which no agent here sets otherwise).
 */
function defaults(o: KObject): void {
  canonicalizeQuantities(nodeSchema, o);
  const status = rec(o.status);
  if (status && rec(status.capacity) && (status.allocatable === undefined || status.allocatable === null)) {
    status.allocatable = { ...rec(status.capacity) };
  }
  const nodeInfo = rec(status?.nodeInfo);
  if (nodeInfo) for (const k of NODE_INFO_STRINGS) nodeInfo[k] ??= '';
  const spec = rec(o.spec);
  if (spec) {
    const cidrs = strs(spec.podCIDRs);
    if (cidrs.length === 0 && str(spec.podCIDR)) spec.podCIDRs = [spec.podCIDR];
    else if (cidrs.length > 0 && !str(spec.podCIDR)) spec.podCIDR = cidrs[0];
  }
}

function validateTaints(taints: unknown, path: string): Cause[] {
  const out: Cause[] = [];
  const seen = new Map<string, Set<string>>();
  recs(taints).forEach((t, i) => {
    const p = index(path, i);
    const k = strAt(t, 'key');
    const v = strAt(t, 'value');
    const effect = strAt(t, 'effect');
    out.push(...messages(child(p, 'key'), k, qualifiedNameErrors(k)));
    const ve = labelValueErrors(v);
    if (ve.length) out.push(invalid(child(p, 'value'), v, ve.join(';')));
    if (!effect) out.push(required(child(p, 'effect')));
    else if (!TAINT_EFFECTS.includes(effect)) out.push(notSupported(child(p, 'effect'), effect, TAINT_EFFECTS));
    const keys = seen.get(effect) ?? new Set<string>();
    if (keys.has(k)) {
      out.push(duplicate(p, t, 'taints must be unique by key and effect pair'));
      return;
    }
    keys.add(k);
    seen.set(effect, keys);
  });
  return out;
}

/** Upstream ValidateNode (+ ValidateNodeResources): taints, podCIDRs, resource quantities, unique addresses. */
function validate(o: KObject): Cause[] {
  const out: Cause[] = [];
  out.push(...validateTaints(get(o, 'spec', 'taints'), 'spec.taints'));
  const cidrs = strs(get(o, 'spec', 'podCIDRs'));
  cidrs.forEach((c, i) => out.push(...messages(index('spec.podCIDRs', i), c, cidrErrors(c))));
  if (cidrs.length > 1) {
    const families = new Set(cidrs.map((c) => (c.includes(':') ? 6 : 4)));
    if (cidrs.length > 2 || families.size !== cidrs.length) {
      out.push(invalid('spec.podCIDRs', cidrs, 'may specify no more than one CIDR for each IP family'));
    }
    const seen = new Set<string>();
    cidrs.forEach((c, i) => {
      if (seen.has(c)) out.push(duplicate(index('spec.podCIDRs', i), c));
      seen.add(c);
    });
  }
  out.push(...resourceList('status.capacity', get(o, 'status', 'capacity')));
  out.push(...resourceList('status.allocatable', get(o, 'status', 'allocatable')));
  const seenAddr = new Set<string>();
  recs(get(o, 'status', 'addresses')).forEach((a, i) => {
    const k = `${strAt(a, 'type')}\u0000${strAt(a, 'address')}`;
    if (seenAddr.has(k)) out.push(duplicate(index('status.addresses', i), a));
    seenAddr.add(k);
  });
  return out;
}

/** Upstream ValidateNodeUpdate: podCIDRs and providerID may only go from unset to set; externalID never changes. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const out: Cause[] = [];
  const oldCidrs = strs(get(old, 'spec', 'podCIDRs'));
  const newCidrs = strs(get(o, 'spec', 'podCIDRs'));
  if (oldCidrs.length > 0 && (oldCidrs.length !== newCidrs.length || oldCidrs.some((c, i) => c !== newCidrs[i]))) {
    out.push(forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  const oldProvider = strAt(old, 'spec', 'providerID');
  if (oldProvider && oldProvider !== strAt(o, 'spec', 'providerID')) {
    out.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  if (strAt(old, 'spec', 'externalID') !== strAt(o, 'spec', 'externalID')) out.push(forbidden('spec.externalID', 'may not be updated'));
  return out;
}

/** STATUS as kubectl prints it: Ready / NotReady / Unknown, plus ",SchedulingDisabled". */
export function nodeStatusCell(o: KObject): string {
  const ready = recs(get(o, 'status', 'conditions')).find((c) => c.type === 'Ready');
  const status: string[] = [];
  if (ready) status.push(ready.status === 'True' ? 'Ready' : 'NotReady');
  if (status.length === 0) status.push('Unknown');
  if (get(o, 'spec', 'unschedulable') === true) status.push('SchedulingDisabled');
  return status.join(',');
}

/** ROLES: node-role.svc.io/<role> label keys and the svc.io/role value, sorted, or <none>. */
export function nodeRolesCell(o: KObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(o.metadata?.labels ?? {})) {
    if (k.startsWith(NODE_ROLE_PREFIX)) {
      const role = k.slice(NODE_ROLE_PREFIX.length);
      if (role) roles.add(role);
    } else if (k === NODE_ROLE_LABEL && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

function address(o: KObject, type: string): string {
  const a = recs(get(o, 'status', 'addresses')).find((x) => x.type === type);
  return str(a?.address) ?? '<none>';
}

function infoOrUnknown(o: KObject, f: string): string {
  return strAt(o, 'status', 'nodeInfo', f) || '<unknown>';
}

export function nodeColumns(now: Now): TableColumn[] {
  return [
    column('Status', 'string', 'The status of the node', nodeStatusCell),
    column('Roles', 'string', 'The roles of the node', nodeRolesCell),
    ageColumn(now),
    column('Version', 'string', 'Kubelet Version reported by the node.', (o) => strAt(o, 'status', 'nodeInfo', 'kubeletVersion')),
    column('Internal-IP', 'string', 'List of addresses reachable to the node.', (o) => address(o, 'InternalIP'), 1),
    column('External-IP', 'string', 'List of addresses reachable to the node.', (o) => address(o, 'ExternalIP'), 1),
    column('OS-Image', 'string', 'OS Image reported by the node from /etc/os-release.', (o) => infoOrUnknown(o, 'osImage'), 1),
    column('Kernel-Version', 'string', "Kernel Version reported by the node from 'uname -r'.", (o) => infoOrUnknown(o, 'kernelVersion'), 1),
    column('Container-Runtime', 'string', 'ContainerRuntime Version reported by the node through runtime remote API.', (o) => infoOrUnknown(o, 'containerRuntimeVersion'), 1),
  ];
}

export function makeNodeType(now: Now = Date.now): ResourceType {
  return {
    group: '',
    version: 'v1',
    resource: 'nodes',
    singular: 'node',
    kind: 'Node',
    listKind: 'NodeList',
    namespaced: false,
    shortNames: ['no'],
    schema: nodeSchema,
    hasStatus: true,
    // The node agent registers with its status filled in; upstream's node strategy keeps it.
    keepStatusOnCreate: true,
    specFields: ['spec'],
    fieldSelectors: {
      'spec.unschedulable': (o) => String(get(o, 'spec', 'unschedulable') === true),
    },
    tableColumns: nodeColumns(now),
    defaults,
    validate,
    validateUpdate,
  };
}

export const nodeType: ResourceType = makeNodeType();

