import type { KObject } from '../../../../../apiserver/api/types';
import type { ResourceType } from '../../../../../apiserver/registry/resource-type';

/** A fixed clock for table tests. */
export const NOW = Date.parse('2025-03-01T12:00:00Z');
export const now = (): number => NOW;

/** An RFC 3339 timestamp ms milliseconds before NOW. */
export function ago(ms: number): string {
  return new Date(NOW - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The cells of the named columns, keyed by column name. */
export function cells(t: ResourceType, o: KObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of t.tableColumns ?? []) out[c.name] = c.cell(o);
  return out;
}

/** The field paths of causes, for compact assertions. */
export function fields(causes: ReadonlyArray<{ field?: string; message: string }>): string[] {
  return causes.map((c) => c.field ?? '');
}
