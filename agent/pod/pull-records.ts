/**
 * Image pull records under <root-dir>/image_manager (spec Appendix D), as upstream's
 * ensure-secret-pulled-images records: before a pull starts an intent goes to pulling/, and a
 * successful pull writes a record to pulled/ (which image references resolved to which image and
 * when) and drops the intent. Both survive restarts: an intent left by an agent that died
 * mid-pull is settled at start-up (a record if the image arrived, nothing otherwise), and the
 * pulled records tell image GC when an image was last pulled.
 *
 * File names are "sha256-<hex of the image reference>" (intents) and of the image ID or digest
 * (records); contents are small JSON documents written atomically with mode 0600.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

const API_VERSION = 'nodeagent.config.svc.io/v1alpha1';

export interface PullIntent {
  apiVersion: string;
  kind: 'ImagePullIntent';
  image: string;
  startedAt: string;
}

export interface PulledRecord {
  apiVersion: string;
  kind: 'ImagePulledRecord';
  /** Image ID or digest the runtime reported for the pull. */
  imageRef: string;
  /** References that resolved to it. */
  images: string[];
  lastUpdatedTime: string;
}

export function recordName(ref: string): string {
  return `sha256-${createHash('sha256').update(ref).digest('hex')}`;
}

async function writeJson(file: string, doc: unknown): Promise<void> {
  const tmp = `${file}.tmp`;
  await writeFile(tmp, JSON.stringify(doc, null, 2) + '\n', { mode: 0o600 });
  await rename(tmp, file);
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export class PullRecords {
  private readonly pullingDir: string;
  private readonly pulledDir: string;

  constructor(
    /** <root-dir>/image_manager */
    dir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.pullingDir = path.join(dir, 'pulling');
    this.pulledDir = path.join(dir, 'pulled');
  }

  private async dirs(): Promise<void> {
    await mkdir(this.pullingDir, { recursive: true, mode: 0o700 });
    await mkdir(this.pulledDir, { recursive: true, mode: 0o700 });
  }

  /** Notes that a pull of `image` is starting. Rejects with the fs error. */
  async startPull(image: string): Promise<void> {
    await this.dirs();
    const doc: PullIntent = { apiVersion: API_VERSION, kind: 'ImagePullIntent', image, startedAt: new Date(this.now()).toISOString() };
    await writeJson(path.join(this.pullingDir, recordName(image)), doc);
  }

  /** Drops the intent (the pull failed). Idempotent. */
  async abandonPull(image: string): Promise<void> {
    await rm(path.join(this.pullingDir, recordName(image)), { force: true });
  }

  /** Records a successful pull of `image` as imageRef and drops the intent. */
  async finishPull(image: string, imageRef: string): Promise<void> {
    await this.dirs();
    const file = path.join(this.pulledDir, recordName(imageRef));
    const prev = await readJson<PulledRecord>(file);
    const images = [...new Set([...(prev?.images ?? []), image])].sort();
    const doc: PulledRecord = { apiVersion: API_VERSION, kind: 'ImagePulledRecord', imageRef, images, lastUpdatedTime: new Date(this.now()).toISOString() };
    await writeJson(file, doc);
    await this.abandonPull(image);
  }

  /** The record for an image ID or digest, if one was written. */
  pulled(imageRef: string): Promise<PulledRecord | undefined> {
    return readJson<PulledRecord>(path.join(this.pulledDir, recordName(imageRef)));
  }

  /** Forgets an image (removed by GC). Idempotent. */
  async forget(imageRef: string): Promise<void> {
    await rm(path.join(this.pulledDir, recordName(imageRef)), { force: true });
  }

  /** Every intent left behind. */
  async intents(): Promise<PullIntent[]> {
    let names: string[];
    try {
      names = await readdir(this.pullingDir);
    } catch {
      return [];
    }
    const out: PullIntent[] = [];
    for (const n of names) {
      if (!n.startsWith('sha256-') || n.endsWith('.tmp')) continue;
      const doc = await readJson<PullIntent>(path.join(this.pullingDir, n));
      if (doc?.kind === 'ImagePullIntent' && typeof doc.image === 'string') out.push(doc);
      else await rm(path.join(this.pullingDir, n), { force: true });
    }
    return out;
  }

  /**
   * Settles intents an earlier run left: `present` says whether (and as which ref) the image is
   * there now. Present images get a record; every intent is dropped. Resolves how many were settled.
   */
  async recover(present: (image: string) => Promise<string | undefined>): Promise<number> {
    const intents = await this.intents();
    for (const i of intents) {
      const ref = await present(i.image).catch(() => undefined);
      if (ref) await this.finishPull(i.image, ref);
      else await this.abandonPull(i.image);
    }
    return intents.length;
  }
}
