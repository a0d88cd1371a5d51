import type { Cause } from '../../api/errors';
import type { KObject } from '../../api/types';
import { qualifiedNameErrors } from '../../api/name-validation';
import { withMeta } from '../common-schemas';
import { messages } from '../common-validation';
import { duplicate, immutable, index, invalid, required, tooLong } from '../field-errors';
import { get, rec, recs, str, strs } from '../obj-access';
import type { ResourceType, TableColumn } from '../resource-type';
import { atomicList, described, int32, mapList, obj, ptr, str as s } from '../schema-builders';
import { semanticEqual } from '../semantic-equal';
import { ageColumn, column, type Now } from '../table';
import { STORAGE_V1 } from './storage-common';

/** storage.svc.io/v1 CSINode: the CSI drivers installed on one node (named as the node). */

/** Upstream csiNodeIDMaxLength. */
const NODE_ID_MAX = 192;

const csiNodeDriverSchema = obj(
  `${STORAGE_V1}.CSINodeDriver`,
  {
    name: [1, s('The name of the CSI driver.')],
    nodeID: [2, s('The node\'s name from the driver\'s point of view.')],
    topologyKeys: [3, atomicList(s(), 'The topology keys the driver supports.')],
    allocatable: [
      4,
      described(
        'The volume resources of the node available for scheduling.',
        obj(`${STORAGE_V1}.VolumeNodeResources`, { count: [1, ptr(int32('The most volumes of this driver a node can use.'))] }),
      ),
    ],
  },
  { required: ['name', 'nodeID'] },
);

export const csiNodeSchema = withMeta(`${STORAGE_V1}.CSINode`, {
  spec: [
    2,
    described(
      'The specification of CSINode.',
      obj(`${STORAGE_V1}.CSINodeSpec`, { drivers: [1, mapList(csiNodeDriverSchema, ['name'], 'The CSI drivers on the node.')] }, { required: ['drivers'] }),
    ),
  ],
});

/** Upstream ValidateCSINode (spec.drivers): names and node IDs set, names unique, topology keys qualified names. */
function validate(o: KObject): Cause[] {
  const out: Cause[] = [];
  const seen = new Set<string>();
  recs(get(o, 'spec', 'drivers')).forEach((d, i) => {
    const p = index('spec.drivers', i);
    const name = str(d.name) ?? '';
    if (name === '') out.push(required(`${p}.name`));
    else if (seen.has(name)) out.push(duplicate(`${p}.name`, name));
    seen.add(name);
    const nodeID = str(d.nodeID) ?? '';
    if (nodeID === '') out.push(required(`${p}.nodeID`));
    else if (nodeID.length > NODE_ID_MAX) out.push(tooLong(`${p}.nodeID`, NODE_ID_MAX));
    strs(d.topologyKeys).forEach((k, j) => out.push(...messages(index(`${p}.topologyKeys`, j), k, qualifiedNameErrors(k))));
    const count = get(d, 'allocatable', 'count');
    if (typeof count === 'number' && count < 0) out.push(invalid(`${p}.allocatable.count`, count, 'must be greater than or equal to 0'));
  });
  return out;
}

/** Upstream ValidateCSINodeUpdate: a driver that stays keeps its nodeID and topologyKeys. */
function validateUpdate(o: KObject, old: KObject): Cause[] {
  const before = new Map(recs(get(old, 'spec', 'drivers')).map((d) => [str(d.name) ?? '', d]));
  const out: Cause[] = [];
  recs(get(o, 'spec', 'drivers')).forEach((d, i) => {
    const prev = before.get(str(d.name) ?? '');
    if (!prev) return;
    const p = index('spec.drivers', i);
    if (d.nodeID !== prev.nodeID) out.push(immutable(`${p}.nodeID`, d.nodeID ?? null));
    if (!semanticEqual(d.topologyKeys ?? [], prev.topologyKeys ?? [])) out.push(immutable(`${p}.topologyKeys`, d.topologyKeys ?? null));
  });
  return out;
}

function csiNodeColumns(now: Now): TableColumn[] {
  return [column('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node', (o) => recs(rec(o.spec)?.drivers).length), ageColumn(now)];
}

export function makeCsiNodeType(now: Now = Date.now): ResourceType {
  return {
    group: 'storage.svc.io',
    version: 'v1',
    resource: 'csinodes',
    singular: 'csinode',
    kind: 'CSINode',
    listKind: 'CSINodeList',
    namespaced: false,
    schema: csiNodeSchema,
    hasStatus: false,
    tableColumns: csiNodeColumns(now),
    validate,
    validateUpdate,
  };
}
