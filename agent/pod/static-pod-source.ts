/**
 * Static pods from staticPodPath, as upstream's kubelet file source: every file in the directory
 * (not starting with '.') holds one Pod in YAML or JSON; the directory is scanned every
 * fileCheckFrequency and the full set is handed over when it changed. Each pod is made this
 * node's as upstream's applyDefaults does: namespace "default" when unset, name
 * "<name>-<nodeName>", spec.nodeName set, and a UID hashed from the manifest, the node and the
 * file, so an edited manifest is a new pod (the old one is terminated, the new one started).
 * The hash also goes to the annotations svc.io/config.hash (and config.source=file), which the
 * mirror pod carries as svc.io/config.mirror. A file that does not parse is logged and skipped.
 */
import { createHash } from 'node:crypto';
import { readdir as fsReaddir, readFile as fsReadFile, stat } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import type { PodSourceHandler } from './pod-source';
import type { Pod } from '../api/core-v1';
import { canonicalJson } from './runtime-labels';
import { MIRROR_POD_ANNOTATION } from '../../apiserver/api/well-known';

export const CONFIG_HASH = 'svc.io/config.hash';
export const CONFIG_SOURCE = 'svc.io/config.source';

export interface StaticPodSourceOptions {
  dir: string;
  nodeName: string;
  /** Scan period (fileCheckFrequency). */
  periodMs: number;
  clock: Clock;
  log: Log;
  handler: PodSourceHandler;
  readdir?: (dir: string) => Promise<string[]>;
  readFile?: (file: string) => Promise<string>;
}

/** True for pods that came from a manifest file. */
export function isStaticPod(pod: Pod): boolean {
  return pod.metadata.annotations?.[CONFIG_SOURCE] === 'file';
}

/** True for mirror pods (API objects that stand for static pods). */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}

function defaultContainers(list: unknown): void {
  if (!Array.isArray(list)) return;
  for (const c of list as Record<string, unknown>[]) {
    if (typeof c !== 'object' || c === null) continue;
    c['terminationMessagePath'] ??= '/dev/termination-log';
    c['terminationMessagePolicy'] ??= 'File';
  }
}

/** Parses one manifest into this node's static pod; throws Error saying what is wrong. */
export function staticPodFromManifest(text: string, file: string, nodeName: string): Pod {
  const doc: unknown = YAML.parse(text);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('the manifest is not an object');
  const o = doc as Record<string, unknown>;
  if (o['kind'] !== 'Pod') throw new Error(`kind is ${JSON.stringify(o['kind'])}, not "Pod"`);
  if (o['apiVersion'] !== undefined && o['apiVersion'] !== 'v1') throw new Error(`apiVersion is ${JSON.stringify(o['apiVersion'])}, not "v1"`);
  const meta = (typeof o['metadata'] === 'object' && o['metadata'] !== null ? o['metadata'] : {}) as Record<string, unknown>;
  const name = meta['name'];
  if (typeof name !== 'string' || name === '') throw new Error('metadata.name is required');
  const spec = o['spec'] as Record<string, unknown> | undefined;
  if (!spec || !Array.isArray(spec['containers']) || spec['containers'].length === 0) throw new Error('spec.containers must list at least one container');
  for (const c of spec['containers'] as unknown[]) {
    const cc = c as Record<string, unknown> | null;
    if (!cc || typeof cc['name'] !== 'string' || typeof cc['image'] !== 'string') throw new Error('every container needs a name and an image');
  }
  // The UID is a hash of the manifest as written, the node and the file (upstream: md5 of the same).
  const uid = createHash('md5').update(canonicalJson(o)).update(nodeName).update(file).digest('hex');
  const pod = structuredClone(o) as unknown as Pod;
  pod.apiVersion = 'v1';
  pod.kind = 'Pod';
  pod.metadata = {
    ...(meta as Pod['metadata']),
    name: `${name}-${nodeName}`,
    namespace: typeof meta['namespace'] === 'string' && meta['namespace'] !== '' ? meta['namespace'] : 'default',
    uid,
    annotations: { ...((meta['annotations'] as Record<string, string>) ?? {}), [CONFIG_HASH]: uid, [CONFIG_SOURCE]: 'file' },
  };
  delete pod.status;
  pod.spec.nodeName = nodeName;
  pod.spec.restartPolicy ??= 'Always';
  pod.spec.terminationGracePeriodSeconds ??= 30;
  pod.spec.dnsPolicy ??= 'ClusterFirst';
  pod.spec.securityContext ??= {};
  defaultContainers(pod.spec.containers);
  defaultContainers(pod.spec.initContainers);
  return pod;
}

export class StaticPodSource {
  private lastKey: string | undefined;
  private scanned = false;

  constructor(private readonly o: StaticPodSourceOptions) {}

  /** True once the directory has been scanned once. */
  get synced(): boolean {
    return this.scanned;
  }

  /** Scans now and every periodMs until the signal aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.scan();
      if (!(await this.o.clock.sleep(this.o.periodMs, signal))) return;
    }
  }

  /** Reads the directory once and hands over the set if it changed. Never rejects. */
  async scan(): Promise<Pod[]> {
    const readdir = this.o.readdir ?? ((d: string) => fsReaddir(d));
    const readFile = this.o.readFile ?? ((f: string) => fsReadFile(f, 'utf8'));
    let names: string[] = [];
    try {
      names = (await readdir(this.o.dir)).sort();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.o.log.warn({ dir: this.o.dir, error: (e as Error).message }, 'cannot read the static pod directory');
    }
    const pods: Pod[] = [];
    const seen = new Map<string, string>();
    for (const n of names) {
      if (n.startsWith('.')) continue;
      const file = path.join(this.o.dir, n);
      if (!this.o.readdir) {
        const st = await stat(file).catch(() => undefined);
        if (!st?.isFile()) continue;
      }
      let pod: Pod;
      try {
        pod = staticPodFromManifest(await readFile(file), file, this.o.nodeName);
      } catch (e) {
        this.o.log.warn({ file, error: (e as Error).message }, 'skipping static pod manifest');
        continue;
      }
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
      if (seen.has(key)) {
        this.o.log.warn({ file, other: seen.get(key), pod: key }, 'skipping static pod manifest: another file defines the same pod');
        continue;
      }
      seen.set(key, file);
      pods.push(pod);
    }
    const setKey = pods.map((p) => p.metadata.uid).join(',');
    if (setKey !== this.lastKey || !this.scanned) {
      this.lastKey = setKey;
      this.o.handler.snapshot('file', pods);
    }
    this.scanned = true;
    return pods;
  }
}
