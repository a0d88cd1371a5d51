import type { KObject, ListMeta } from '../api/types';
import type { ResourceType, TableColumn } from '../registry/resource-type';
import type { Rendering } from './negotiation';

type TableRendering = Extract<Rendering, { kind: 'table' }>;

const nameColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Cannot be updated.',
  priority: 0,
};

/** Spec 2.6: the default table of a type without its own columns is Name and Created At. */
const createdAt: TableColumn = {
  name: 'Created At',
  type: 'date',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
  cell: (o) => o.metadata.creationTimestamp ?? '',
};

/** Server-side Table output (meta.svc.io/v1 Table, 2.6) of objects of one type. */
export function toTable(t: ResourceType, objects: readonly KObject[], listMeta: ListMeta, r: TableRendering): Record<string, unknown> {
  const cols = t.tableColumns && t.tableColumns.length > 0 ? t.tableColumns : [createdAt];
  const metaApi = `${r.group}/${r.version}`;
  return {
    kind: 'Table',
    apiVersion: metaApi,
    metadata: listMeta,
    columnDefinitions: [nameColumn, ...cols.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority }))],
    rows: objects.map((o) => ({
      cells: [t.tableName ? t.tableName(o) : (o.metadata.name ?? ''), ...cols.map((c) => c.cell(o))],
      object: rowObject(o, r, metaApi),
    })),
  };
}

function rowObject(o: KObject, r: TableRendering, metaApi: string): unknown {
  if (r.includeObject === 'None') return undefined;
  if (r.includeObject === 'Object') return o;
  return { kind: 'PartialObjectMetadata', apiVersion: metaApi, metadata: o.metadata };
}
