/**
 * Image garbage collection, as upstream's image GC manager: when the image filesystem is at or
 * above imageGCHighThresholdPercent, unused images are removed, least recently used first, until
 * usage is back at imageGCLowThresholdPercent. An image is "used" while any container (running
 * or not) refers to it; images are never removed within imageMinimumGCAge of first being seen,
 * and pinned images (the runtime's sandbox image) never. Removed images lose their pull record.
 */
import { statfs } from 'node:fs/promises';
import type { RuntimeService } from '../cri';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import type { PullRecords } from './pull-records';

export interface DiskUsage {
  capacityBytes: number;
  availableBytes: number;
}

export interface ImageGcOptions {
  runtime: RuntimeService;
  clock: Clock;
  log: Log;
  records: PullRecords;
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minAgeMs: number;
  callTimeoutMs: number;
  /** Size of the filesystem at a mount point; undefined when unknown (then nothing is collected). */
  diskUsage?: (mountpoint: string) => Promise<DiskUsage | undefined>;
}

/** statfs of a mount point. */
export async function statfsUsage(mountpoint: string): Promise<DiskUsage | undefined> {
  try {
    const s = await statfs(mountpoint);
    return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
  } catch {
    return undefined;
  }
}

export class ImageGc {
  private readonly firstSeen = new Map<string, number>();
  private readonly lastUsed = new Map<string, number>();

  constructor(private readonly o: ImageGcOptions) {}

  /** One collection; resolves the IDs of removed images. Rejects RuntimeError when the runtime cannot be asked. */
  async runOnce(signal?: AbortSignal): Promise<string[]> {
    const call = { timeoutMs: this.o.callTimeoutMs, ...(signal ? { signal } : {}) };
    const now = this.o.clock.now();
    const [images, containers] = await Promise.all([this.o.runtime.listImages(undefined, call), this.o.runtime.listContainers(undefined, call)]);
    const inUse = new Set<string>();
    for (const c of containers) {
      inUse.add(c.imageId);
      inUse.add(c.imageRef);
      inUse.add(c.image.image);
    }
    const present = new Set<string>();
    for (const i of images) {
      present.add(i.id);
      if (!this.firstSeen.has(i.id)) this.firstSeen.set(i.id, now);
      const used = inUse.has(i.id) || i.repoTags.some((t) => inUse.has(t)) || i.repoDigests.some((d) => inUse.has(d));
      if (used) this.lastUsed.set(i.id, now);
    }
    for (const id of [...this.firstSeen.keys()]) {
      if (!present.has(id)) {
        this.firstSeen.delete(id);
        this.lastUsed.delete(id);
      }
    }

    if (this.o.highThresholdPercent >= 100) return [];
    const fs = await this.o.runtime.imageFsInfo(call);
    const mount = fs.imageFilesystems[0]?.mountpoint;
    if (!mount) return [];
    const usage = await (this.o.diskUsage ?? statfsUsage)(mount);
    if (!usage || usage.capacityBytes <= 0) return [];
    const usedPercent = 100 - (usage.availableBytes * 100) / usage.capacityBytes;
    if (usedPercent < this.o.highThresholdPercent) return [];
    let toFree = (usage.capacityBytes * (100 - this.o.lowThresholdPercent)) / 100 - usage.availableBytes;
    this.o.log.info({ usedPercent: Math.round(usedPercent), highThresholdPercent: this.o.highThresholdPercent, bytesToFree: Math.round(toFree) }, 'image filesystem above the GC threshold');
    const candidates = images
      .filter((i) => !i.pinned && this.lastUsed.get(i.id) !== now && now - (this.firstSeen.get(i.id) ?? now) >= this.o.minAgeMs)
      .sort((a, b) => (this.lastUsed.get(a.id) ?? this.firstSeen.get(a.id) ?? 0) - (this.lastUsed.get(b.id) ?? this.firstSeen.get(b.id) ?? 0));
    const removed: string[] = [];
    for (const i of candidates) {
      if (toFree <= 0) break;
      try {
        await this.o.runtime.removeImage({ image: i.id }, call);
      } catch (e) {
        this.o.log.warn({ image: i.id, error: (e as Error).message }, 'cannot remove image');
        continue;
      }
      await this.o.records.forget(i.id).catch(() => undefined);
      for (const d of i.repoDigests) await this.o.records.forget(d).catch(() => undefined);
      this.firstSeen.delete(i.id);
      this.lastUsed.delete(i.id);
      removed.push(i.id);
      toFree -= i.size;
      this.o.log.info({ image: i.id, tags: i.repoTags, size: i.size }, 'removed unused image');
    }
    return removed;
  }
}
