/**
 * The device manager's checkpoint, <root-dir>/device-plugins/kubelet_internal_checkpoint (the
 * file name is upstream's). Layout (JSON):
 *
 *   {
 *     "Data": {
 *       "PodDeviceEntries": [
 *         { "PodUID": "…", "ContainerName": "app", "ResourceName": "example.com/foo",
 *           "DeviceIDs": { "0": ["dev-0"], "-1": ["dev-1"] },      // by NUMA node, -1 unknown
 *           "AllocResp": { "envs": {…}, "mounts": […], "devices": […], "annotations": {…}, "cdiDevices": […] } }
 *       ],
 *       "RegisteredDevices": { "example.com/foo": ["dev-0", "dev-1", …] }
 *     },
 *     "Checksum": "sha256:<hex>"
 *   }
 *
 * Where we differ from upstream on purpose: upstream's Checksum is a 32-bit FNV-1a hash of Go's
 * spew dump of the Data struct, which only Go with the same struct layout can reproduce, and its
 * AllocResp is the protobuf encoding of ContainerAllocateResponse (base64 in the JSON). Ours is
 * "sha256:" and the hex SHA-256 of the canonical JSON of "Data" (no whitespace; object keys sorted,
 * integer-like keys first in numeric order, as canonicalJson below says), and
 * AllocResp is plain JSON. The field names under Data are upstream's so the file reads the same.
 * An upstream kubelet's checkpoint therefore fails our checksum (and vice versa): it is treated
 * like a corrupt file (logged, the manager starts empty).
 *
 * Writes are atomic: a temp file in the same directory, fsync, rename, fsync of the directory;
 * mode 0600.
 */
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { ContainerAllocation } from './container-allocation';
import { InternalError } from '../errors';

export const CHECKPOINT_FILE = 'kubelet_internal_checkpoint';

export interface PodDeviceEntry {
  PodUID: string;
  ContainerName: string;
  ResourceName: string;
  /** NUMA node (decimal string, "-1" when unknown) -> device IDs. */
  DeviceIDs: Record<string, string[]>;
  /** null: not known (the entry was rebuilt from the runtime after a lost checkpoint). */
  AllocResp: ContainerAllocation | null;
}

export interface CheckpointData {
  PodDeviceEntries: PodDeviceEntry[];
  RegisteredDevices: Record<string, string[]>;
}

/** The checkpoint file exists but cannot be trusted (truncated, not JSON, wrong checksum, wrong shape). */
export class CheckpointCorruptError extends InternalError {
  override readonly name = 'CheckpointCorruptError';
  override readonly code = 'SVC_NODE_ERR_DEVICE_CHECKPOINT_CORRUPT';
}

/** Rebuilds plain objects with their keys inserted in sorted order (see canonicalJson). */
function sortedKeys(_key: string, v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) if (keys[i - 1] > keys[i]) sorted = false;
  if (sorted) return v;
  const out: Record<string, unknown> = {};
  for (const k of keys.sort()) out[k] = o[k];
  return out;
}

/**
 * The canonical JSON of a value: no whitespace, and every object's keys in ECMAScript property
 * order after inserting them sorted (UTF-16 code units), which is: array-index-like keys
 * ("0", "1", … ascending numerically) first, then all other keys sorted. Same data, same bytes.
 */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, sortedKeys);
}

function checksumOfText(canonical: string): string {
  return 'sha256:' + createHash('sha256').update(canonical).digest('hex');
}

export function checksumOf(data: CheckpointData): string {
  return checksumOfText(canonicalJson(data));
}

/** Canonical text of entries already serialised: entries never change once made (see PodDevices). */
const entryText = new WeakMap<PodDeviceEntry, string>();

/**
 * The file's text. The canonical form of Data is valid JSON, so it is written as is; entries are
 * serialised once each and reused by later writes (the text equals canonicalJson(data)).
 */
export function encodeCheckpoint(data: CheckpointData): string {
  const parts: string[] = [];
  for (const e of data.PodDeviceEntries) {
    let t = entryText.get(e);
    if (t === undefined) {
      t = canonicalJson(e);
      entryText.set(e, t);
    }
    parts.push(t);
  }
  const canonical = `{"PodDeviceEntries":[${parts.join(',')}],"RegisteredDevices":${canonicalJson(data.RegisteredDevices)}}`;
  return `{"Data":${canonical},"Checksum":${JSON.stringify(checksumOfText(canonical))}}`;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStrArr = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function checkShape(d: unknown): asserts d is CheckpointData {
  if (!isObj(d) || !Array.isArray(d['PodDeviceEntries']) || !isObj(d['RegisteredDevices'])) throw new CheckpointCorruptError('Data lacks PodDeviceEntries or RegisteredDevices');
  for (const e of d['PodDeviceEntries'] as unknown[]) {
    if (!isObj(e) || typeof e['PodUID'] !== 'string' || typeof e['ContainerName'] !== 'string' || typeof e['ResourceName'] !== 'string') throw new CheckpointCorruptError('a PodDeviceEntry lacks PodUID, ContainerName or ResourceName');
    if (!isObj(e['DeviceIDs']) || !Object.values(e['DeviceIDs']).every(isStrArr)) throw new CheckpointCorruptError('a PodDeviceEntry has malformed DeviceIDs');
    const a = e['AllocResp'];
    if (a === null) continue;
    if (!isObj(a) || !isObj(a['envs']) || !Array.isArray(a['mounts']) || !Array.isArray(a['devices']) || !isObj(a['annotations']) || !isStrArr(a['cdiDevices'])) throw new CheckpointCorruptError('a PodDeviceEntry has a malformed AllocResp');
  }
  for (const v of Object.values(d['RegisteredDevices'])) if (!isStrArr(v)) throw new CheckpointCorruptError('RegisteredDevices holds something other than lists of IDs');
}

/** Parses and verifies a checkpoint's text. Throws CheckpointCorruptError. */
export function decodeCheckpoint(text: string): CheckpointData {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new CheckpointCorruptError(`not JSON (truncated?): ${(e as Error).message}`);
  }
  if (!isObj(doc) || typeof doc['Checksum'] !== 'string') throw new CheckpointCorruptError('no Data/Checksum (not an svc-node checkpoint)');
  const data = doc['Data'];
  checkShape(data);
  const want = checksumOf(data);
  if (doc['Checksum'] !== want) throw new CheckpointCorruptError(`checksum mismatch: file says ${doc['Checksum']}, data hashes to ${want}`);
  return data;
}

/** Reads the checkpoint in `dir`; undefined when there is none. Throws CheckpointCorruptError or the fs error. */
export async function readCheckpoint(dir: string): Promise<CheckpointData | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(path.join(dir, CHECKPOINT_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return decodeCheckpoint(text);
}

let tmpSeq = 0;

/** Writes the checkpoint atomically (temp + fsync + rename + directory fsync), mode 0600. */
export async function writeCheckpoint(dir: string, data: CheckpointData): Promise<void> {
  const final = path.join(dir, CHECKPOINT_FILE);
  const tmp = path.join(dir, `.${CHECKPOINT_FILE}.tmp-${process.pid}-${++tmpSeq}`);
  const fh = await fsp.open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(encodeCheckpoint(data));
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await fsp.rename(tmp, final);
  } catch (e) {
    await fsp.rm(tmp, { force: true });
    throw e;
  }
  const d = await fsp.open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}
