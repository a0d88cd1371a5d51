import { canonicalApiVersion } from '../api/group-names';
import type { ManagedFieldsEntry } from '../api/types';
import { isObject } from '../api/types';
import { isEmpty, union, type FieldSet } from './field-set';
import { fromFieldsV1, toFieldsV1 } from './fields-v1';
import { goJson } from './path-element';

/**
 * metadata.managedFields decoded (spec 2.4): one field set per manager identity. An applier has
 * one identity per manager and sub-resource; an updater one per manager, API version and
 * sub-resource (upstream's BuildManagerIdentifier: the entry without time and fields, and
 * without apiVersion for Apply, as JSON).
 */
export interface Manager {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource: string;
  time?: string;
  set: FieldSet;
  /** The set as read from the object and its stored FieldsV1, written back as it was while the set stays that set. */
  stored?: { set: FieldSet; fieldsV1: Record<string, unknown> };
}

/** Managers by identity (managerId). */
export type Managers = Map<string, Manager>;

/** The identity of a manager as upstream builds it: the Go JSON of the entry's identifying fields, in its field order. */
export function managerId(m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  const parts: string[] = [];
  if (m.manager) parts.push(`"manager":${goJson(m.manager)}`);
  parts.push(`"operation":"${m.operation}"`);
  if (m.operation === 'Update' && m.apiVersion) parts.push(`"apiVersion":${goJson(m.apiVersion)}`);
  if (m.subresource) parts.push(`"subresource":${goJson(m.subresource)}`);
  return `{${parts.join(',')}}`;
}

/** Why stored managedFields cannot be read (the caller decides what that means). */
export class ManagedFieldsError extends Error {}

/** Reads managedFields as upstream's DecodeManagedFields does; a later entry of the same identity wins. */
export function decodeManagedFields(entries: unknown): Managers {
  const out: Managers = new Map();
  if (entries === undefined || entries === null) return out;
  if (!Array.isArray(entries)) throw new ManagedFieldsError('managedFields must be a list');
  entries.forEach((e: unknown, i) => {
    if (!isObject(e)) throw new ManagedFieldsError(`managed fields entry ${i} must be an object`);
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new ManagedFieldsError('operation must be `Apply` or `Update`');
    if (typeof e.apiVersion !== 'string' || e.apiVersion === '') throw new ManagedFieldsError('apiVersion must not be empty');
    if (e.fieldsType === undefined || e.fieldsType === '') throw new ManagedFieldsError(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1') throw new ManagedFieldsError(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`);
    let set: FieldSet;
    try {
      set = fromFieldsV1(e.fieldsV1 ?? {});
    } catch (err) {
      throw new ManagedFieldsError(`error decoding set: ${(err as Error).message}`);
    }
    const m: Manager = {
      manager: typeof e.manager === 'string' ? e.manager : '',
      operation: e.operation,
      // A client writing managedFields back under a group's k8s.io name means the svc.io one (group aliases).
      apiVersion: canonicalApiVersion(e.apiVersion),
      subresource: typeof e.subresource === 'string' ? e.subresource : '',
      set,
      stored: { set, fieldsV1: isObject(e.fieldsV1) ? e.fieldsV1 : {} },
    };
    if (typeof e.time === 'string') m.time = e.time;
    out.set(managerId(m), m);
  });
  return out;
}

/** Seconds since the epoch of an entry's time (0 without one), as upstream sorts by. */
function seconds(time: string | undefined): number {
  const t = time ? Date.parse(time) : NaN;
  return Number.isNaN(t) ? 0 : Math.floor(t / 1000);
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** managedFields as upstream writes them: entries sorted by operation, time, manager, API version, sub-resource; undefined when none. */
export function encodeManagedFields(managers: Managers): ManagedFieldsEntry[] | undefined {
  if (managers.size === 0) return undefined;
  const entries: ManagedFieldsEntry[] = [];
  for (const m of managers.values()) {
    const e: ManagedFieldsEntry = {};
    if (m.manager) e.manager = m.manager;
    e.operation = m.operation;
    e.apiVersion = m.apiVersion;
    if (m.time) e.time = m.time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = m.stored && m.stored.set === m.set ? m.stored.fieldsV1 : toFieldsV1(m.set);
    if (m.subresource) e.subresource = m.subresource;
    entries.push(e);
  }
  return entries.sort(
    (p, q) =>
      byText(p.operation ?? '', q.operation ?? '') ||
      seconds(p.time) - seconds(q.time) ||
      byText(p.manager ?? '', q.manager ?? '') ||
      byText(p.apiVersion ?? '', q.apiVersion ?? '') ||
      byText(p.subresource ?? '', q.subresource ?? ''),
  );
}

/** Drops managers left with nothing. */
export function dropEmpty(managers: Managers): void {
  for (const [id, m] of managers) if (isEmpty(m.set)) managers.delete(id);
}

/** A copy of the managers whose sets can be replaced without touching the original's entries. */
export function copyManagers(managers: Managers): Managers {
  return new Map([...managers].map(([id, m]) => [id, { ...m }]));
}

/** Upstream's cap on Update entries (DefaultMaxUpdateManagers). */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT = 'ancient-changes';

/**
 * Keeps at most `max` Update entries (upstream's capManagersManager): the oldest are merged, per
 * API version, into an "ancient-changes" entry carrying the time of the latest merged one.
 */
export function capUpdateManagers(managers: Managers, max = MAX_UPDATE_MANAGERS): void {
  const updaters = [...managers].filter(([, m]) => m.operation === 'Update');
  if (updaters.length <= max) return;
  updaters.sort(([ia, a], [ib, b]) => seconds(a.time) - seconds(b.time) || byText(ia, ib));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (const [id, m] of updaters) {
    if (length <= max) break;
    const bucket = managerId({ manager: ANCIENT, operation: 'Update', apiVersion: m.apiVersion, subresource: '' });
    const first = firstOfVersion.get(m.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, id);
      continue;
    }
    if (!managers.has(bucket)) {
      const f = managers.get(first)!;
      managers.delete(first);
      managers.set(bucket, { manager: ANCIENT, operation: 'Update', apiVersion: m.apiVersion, subresource: '', time: f.time, set: f.set });
    }
    const b = managers.get(bucket)!;
    managers.set(bucket, { ...b, set: union(m.set, b.set), time: m.time, stored: undefined });
    managers.delete(id);
    length--;
  }
}

/** The field manager of a write without ?fieldManager: the User-Agent's product token, as upstream derives it. */
export function managerFromUserAgent(ua: string | undefined): string {
  const token = (ua ?? '').split('/')[0].trim();
  return token.slice(0, 128) || 'unknown';
}
