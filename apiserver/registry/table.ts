import type { KObject } from '../api/types';
import type { TableColumn } from './resource-type';

/**
 * Helpers for server-side Table columns (meta.svc.io/v1 Table), mirroring upstream's
 * pkg/printers/internalversion: ages are strings computed on the server, such as "5m10s".
 */

/** A clock in milliseconds since the epoch; injected so tables are testable. */
export type Now = () => number;

/** Upstream apimachinery duration.HumanDuration, the format kubectl shows in AGE columns. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  // Up to one second in the future is clock skew and reads as "0s".
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24);
    const dy = days % 365;
    return dy === 0 ? `${Math.trunc(days / 365)}y` : `${Math.trunc(days / 365)}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** Upstream translateTimestampSince: "<unknown>" for an unset or unparsable timestamp. */
export function translateTimestampSince(ts: unknown, now: Now): string {
  if (typeof ts !== 'string' || !ts) return '<unknown>';
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now() - t);
}

const CREATION_TIMESTAMP_DOC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.';

/** The Age column (type string, as upstream), relative to now(). */
export function ageColumn(now: Now): TableColumn {
  return {
    name: 'Age',
    type: 'string',
    description: CREATION_TIMESTAMP_DOC,
    priority: 0,
    cell: (obj: KObject) => translateTimestampSince(obj.metadata?.creationTimestamp, now),
  };
}

/** A plain column. */
export function column(name: string, type: TableColumn['type'], description: string, cell: (obj: KObject) => unknown, priority = 0): TableColumn {
  return { name, type, description, priority, cell };
}

/** Upstream labels.FormatLabels: sorted k=v pairs joined by ',', "<none>" when empty. */
export function formatLabels(m: unknown): string {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return '<none>';
  const entries = Object.entries(m as Record<string, unknown>)
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(',') : '<none>';
}
