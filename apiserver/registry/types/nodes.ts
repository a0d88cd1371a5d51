import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { withMeta } from '../common-schemas';
import { messages, resourceList } from '../common-validation';
import { child, duplicate, forbidden, index, invalid, notSupported, required } from '../field-errors';
import { cidrErrors, labelValueErrors, qualifiedNameErrors } from '../../api/name-validation';
import { get, rec, recs, str, strAt, strs } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { canonicalizeQuantities } from '../canonical-quantities';
import { atomicList, bool, described, int32, int64, mapList, obj, ptr, quantityMap, setList, str as s, strEnum, time } from '../schema-builders';
import { ageColumn, column, type Now } from '../table';

/** core/v1 Node. */

export const TAINT_EFFECTS: readonly string[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
/** Upstream node-role.kubernetes.io/<role> and kubernetes.io/role labels that kubectl shows as ROLES. */
export const NODE_ROLE_PREFIX = 'node-role.svc.io/';
export const NODE_ROLE_LABEL = 'svc.io/role';

const V1 = 'k8s.io.api.core.v1';

const taintSchema = obj(
  `${V1}.Taint`,
  {
    key: [1, ptr(s('The taint key to be applied to a node.'))],
    value: [2, s('The taint value corresponding to the taint key.')],
    effect: [3, ptr(strEnum(TAINT_EFFECTS, 'The effect of the taint on pods that do not tolerate it: NoSchedule, PreferNoSchedule or NoExecute.'))],
    timeAdded: [4, time('The time the taint was added; only written for NoExecute taints.')],
  },
  { required: ['key', 'effect'] },
);

const nodeConditionSchema = obj(
  `${V1}.NodeCondition`,
  {
    type: [1, ptr(s('Type of node condition.'))],
    status: [2, ptr(s('Status of the condition: True, False or Unknown.'))],
    lastHeartbeatTime: [3, time('Last time we got an update on a given condition.')],
    lastTransitionTime: [4, time('Last time the condition transitioned from one status to another.')],
    reason: [5, s('A (brief) reason for the condition\'s last transition.')],
    message: [6, s('A human-readable message indicating details about the last transition.')],
  },
  { required: ['type'] },
);

/** Deprecated dynamic kubelet configuration (upstream keeps the type; nothing reads it). */
const nodeConfigSourceSchema = obj(`${V1}.NodeConfigSource`, {
  configMap: [
    2,
    described(
      'A reference to a Node\'s ConfigMap.',
      obj(`${V1}.ConfigMapNodeConfigSource`, {
        namespace: [1, ptr(s('The namespace of the referenced ConfigMap.'))],
        name: [2, ptr(s('The name of the referenced ConfigMap.'))],
        uid: [3, s('The UID of the referenced ConfigMap.')],
        resourceVersion: [4, s('The resourceVersion of the referenced ConfigMap.')],
        kubeletConfigKey: [5, ptr(s('The key of the ConfigMap holding the KubeletConfiguration.'))],
      }),
    ),
  ],
});

const nodeSystemInfoSchema = obj(`${V1}.NodeSystemInfo`, {
  machineID: [1, ptr(s('MachineID reported by the node, unique per machine.'))],
  systemUUID: [2, ptr(s('SystemUUID reported by the node.'))],
  bootID: [3, ptr(s('Boot ID reported by the node.'))],
  kernelVersion: [4, ptr(s('Kernel version reported by the node (uname -r).'))],
  osImage: [5, ptr(s('OS image reported by the node.'))],
  containerRuntimeVersion: [6, ptr(s('Container runtime version reported by the node.'))],
  kubeletVersion: [7, ptr(s('Kubelet version reported by the node.'))],
  kubeProxyVersion: [8, ptr(s('Deprecated: always empty.'))],
  operatingSystem: [9, ptr(s('The operating system reported by the node.'))],
  architecture: [10, ptr(s('The architecture reported by the node.'))],
  swap: [11, described('Swap information.', obj(`${V1}.NodeSwapStatus`, { capacity: [1, ptr(int64('Total amount of swap memory in bytes.'))] }))],
});

export const nodeSchema = withMeta(`${V1}.Node`, {
  spec: [
    2,
    described('Spec defines the behavior of a node.', obj(`${V1}.NodeSpec`, {
      podCIDR: [1, s('PodCIDR represents the pod IP range assigned to the node.')],
      podCIDRs: [7, setList(s(), 'The IP ranges assigned to the node for usage by Pods on that node.')],
      providerID: [3, s('ID of the node assigned by the cloud provider.')],
      unschedulable: [4, bool('Unschedulable controls node schedulability of new pods.')],
      // Upstream taints have no patchMergeKey (listType atomic): a patch replaces the whole list.
      taints: [5, atomicList(taintSchema, "If specified, the node's taints.")],
      configSource: [6, described('Deprecated: no longer used.', nodeConfigSourceSchema)],
      externalID: [2, s('Deprecated.')],
      podPreemptionPolicy: [
        8,
        described(
          'Alpha: how pods on this node may be preempted.',
          obj(`${V1}.NodePodPreemptionPolicy`, { disableResizePreemption: [1, setList(s(), 'Alpha: resize cases that do not preempt pods.')] }),
        ),
      ],
    })),
  ],
  status: [
    3,
    described('Most recently observed status of the node.', obj(`${V1}.NodeStatus`, {
      capacity: [1, quantityMap('Capacity represents the total resources of a node.')],
      allocatable: [2, quantityMap('Allocatable represents the resources of a node that are available for scheduling.')],
      phase: [3, s('Deprecated.')],
      conditions: [4, mapList(nodeConditionSchema, ['type'], 'Conditions is an array of current observed node conditions.')],
      addresses: [
        5,
        mapList(
          obj(
            `${V1}.NodeAddress`,
            { type: [1, ptr(s('Node address type: Hostname, ExternalIP or InternalIP.'))], address: [2, ptr(s('The node address.'))] },
            { required: ['type'] },
          ),
          ['type'],
          'List of addresses reachable to the node.',
        ),
      ],
      daemonEndpoints: [
        6,
        described(
          'Endpoints of daemons running on the node.',
          obj(`${V1}.NodeDaemonEndpoints`, {
            kubeletEndpoint: [1, described('Endpoint on which the kubelet is listening.', obj(`${V1}.DaemonEndpoint`, { Port: [1, ptr(int32('Port number of the endpoint.'))] }))],
          }),
        ),
      ],
      nodeInfo: [7, described('Set of ids/uuids to uniquely identify the node.', nodeSystemInfoSchema)],
      images: [
        8,
        atomicList(
          obj(`${V1}.ContainerImage`, { names: [1, atomicList(s(), 'Names by which this image is known.')], sizeBytes: [2, int64('The size of the image in bytes.')] }),
          'List of container images on this node.',
        ),
      ],
      volumesInUse: [9, atomicList(s(), 'List of attachable volumes in use (mounted) by the node.')],
      volumesAttached: [
        10,
        atomicList(
          obj(`${V1}.AttachedVolume`, { name: [1, ptr(s('Name of the attached volume.'))], devicePath: [2, ptr(s('The device path where the volume should be available.'))] }),
          'List of volumes that are attached to the node.',
        ),
      ],
      config: [
        11,
        described(
          'Deprecated: status of the config assigned to the node.',
          obj(`${V1}.NodeConfigStatus`, {
            assigned: [1, described('The config the node will try to use.', nodeConfigSourceSchema)],
            active: [2, described('The config the node is actively using.', nodeConfigSourceSchema)],
            lastKnownGood: [3, described('The config the node falls back to on error.', nodeConfigSourceSchema)],
            error: [4, s('Any problem reconciling the config.')],
          }),
        ),
      ],
      runtimeHandlers: [
        12,
        atomicList(
          obj(`${V1}.NodeRuntimeHandler`, {
            name: [1, ptr(s('Runtime handler name; empty for the default handler.'))],
            features: [
              2,
              described(
                'Supported features.',
                obj(`${V1}.NodeRuntimeHandlerFeatures`, {
                  recursiveReadOnlyMounts: [1, ptr(bool('Whether the handler supports recursive read-only mounts.'))],
                  userNamespaces: [2, ptr(bool('Whether the handler supports user namespaces.'))],
                }),
              ),
            ],
          }),
          'The available runtime handlers.',
        ),
      ],
      features: [
        13,
        described(
          'Features implemented by the CRI implementation.',
          obj(`${V1}.NodeFeatures`, { supplementalGroupsPolicy: [1, ptr(bool('Whether the runtime supports SupplementalGroupsPolicy.'))] }),
        ),
      ],
      declaredFeatures: [14, atomicList(s(), 'Alpha: features the node declares it supports.')],
    })),
  ],
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

