/**
 * Makes a container's image present per its imagePullPolicy, as upstream's kubelet image manager
 * (images/image_manager.go EnsureImageExists):
 *   Never         the image must be there (ErrImageNeverPull otherwise);
 *   IfNotPresent  ImageStatus first, pull only when absent;
 *   Always        pull every time a container is created.
 * A failed pull is ErrImagePull and starts a per-image-and-pod back-off (10 s doubling to 5 min);
 * while it lasts the answer is ImagePullBackOff without asking the registry. Pulls are recorded
 * under image_manager (./pull-records) and serialized when serializeImagePulls is set. Each step
 * is an event about the container with upstream's reason and message (Pulling, Pulled, Failed,
 * BackOff, ErrImageNeverPull, InspectFailed).
 */
import { NOOP_RECORDER, type EventRecorder } from '../../common/events/recorder';
import { isImageId, parseImageRef, type RuntimeService, type PodSandboxConfig } from '../cri';
import type { Clock } from '../platform/clock';
import type { Log } from '../platform/logger';
import { FlowBackoff } from './flow-backoff';
import { containerRef, goMillis } from './pod-events';
import type { Container, Pod } from '../api/core-v1';
import type { PullRecords } from './pull-records';
import { ContainerSyncError, Reasons } from './sync-errors';

export interface ImageManagerOptions {
  runtime: RuntimeService;
  clock: Clock;
  records: PullRecords;
  log: Log;
  /** One pull at a time (the kubelet's serializeImagePulls, default true). */
  serialize: boolean;
  /** Deadline of ImageStatus calls. */
  callTimeoutMs: number;
  /** Deadline of one pull. */
  pullTimeoutMs: number;
  /** Where the image events go; default none. */
  recorder?: EventRecorder;
}

/** Upstream's default: Always for :latest or untagged images, else IfNotPresent. */
export function pullPolicy(c: Container): 'Always' | 'IfNotPresent' | 'Never' {
  if (c.imagePullPolicy) return c.imagePullPolicy;
  const image = c.image ?? '';
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  return !last.includes(':') || last.endsWith(':latest') ? 'Always' : 'IfNotPresent';
}

export class ImageManager {
  private readonly backoff: FlowBackoff;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: ImageManagerOptions) {
    this.backoff = new FlowBackoff(o.clock);
  }

  /**
   * Resolves the image reference to create the container with (the image ID). Rejects
   * ContainerSyncError with reason ErrImagePull, ImagePullBackOff, ErrImageNeverPull or InvalidImageName.
   */
  async ensureImage(pod: Pod, c: Container, sandbox?: PodSandboxConfig, signal?: AbortSignal): Promise<string> {
    const image = c.image ?? '';
    const event = (type: 'Normal' | 'Warning', reason: string, message: string) => (this.o.recorder ?? NOOP_RECORDER).event(containerRef(pod, c.name), type, reason, message);
    try {
      if (!isImageId(image)) parseImageRef(image);
    } catch (e) {
      const message = `Failed to apply default image tag "${image}": ${(e as Error).message}`;
      event('Warning', 'InspectFailed', message);
      throw new ContainerSyncError(Reasons.InvalidImageName, message);
    }
    const policy = pullPolicy(c);
    const call = { timeoutMs: this.o.callTimeoutMs, ...(signal ? { signal } : {}) };
    if (policy !== 'Always') {
      const st = await this.o.runtime.imageStatus({ image }, false, call);
      if (st.image) {
        event('Normal', 'Pulled', `Container image "${image}" already present on machine`);
        return st.image.id;
      }
      if (policy === 'Never') {
        const message = `Container image "${image}" is not present with pull policy of Never`;
        event('Warning', 'ErrImageNeverPull', message);
        throw new ContainerSyncError(Reasons.ErrImageNeverPull, message);
      }
    }
    const key = `${pod.metadata.uid ?? ''}_${image}`;
    if (this.backoff.isInBackOffSinceUpdate(key)) {
      // Upstream records the pull back-off as a Normal event.
      event('Normal', 'BackOff', `Back-off pulling image "${image}"`);
      throw new ContainerSyncError(Reasons.ImagePullBackOff, `Back-off pulling image "${image}"`, Math.max(100, this.backoff.remainingSinceUpdate(key)));
    }
    event('Normal', 'Pulling', `Pulling image "${image}"`);
    const asked = this.o.clock.now();
    try {
      const { ref, pullMs, size } = await this.pull(image, sandbox, signal);
      const total = this.o.clock.now() - asked;
      event('Normal', 'Pulled', `Successfully pulled image "${image}" in ${goMillis(pullMs)} (${goMillis(total)} including waiting). Image size: ${size} bytes.`);
      return ref;
    } catch (e) {
      event('Warning', 'Failed', `Failed to pull image "${image}": ${(e as Error).message}`);
      this.backoff.next(key, this.o.clock.now());
      // Sync again halfway through the back-off: the status shows ErrImagePull for a while, then
      // ImagePullBackOff until the next attempt (upstream's jittered worker requeue gives the same mix).
      throw new ContainerSyncError(Reasons.ErrImagePull, (e as Error).message, Math.max(1000, this.backoff.get(key) / 2));
    }
  }

  /** Forgets the back-off of a pod that is gone. */
  forgetPod(uid: string): void {
    this.backoff.forgetPrefix(`${uid}_`);
  }

  /** Pulls (one at a time when serialized): the image ID, how long the pull itself took, the image's size. */
  private pull(image: string, sandbox: PodSandboxConfig | undefined, signal: AbortSignal | undefined): Promise<{ ref: string; pullMs: number; size: number }> {
    const run = async () => {
      this.o.log.info({ image }, 'pulling image');
      const started = this.o.clock.now();
      await this.o.records.startPull(image).catch((e: Error) => this.o.log.warn({ image, error: e.message }, 'cannot write image pull intent'));
      try {
        const ref = await this.o.runtime.pullImage({ image }, undefined, sandbox, { timeoutMs: this.o.pullTimeoutMs, ...(signal ? { signal } : {}) });
        await this.o.records.finishPull(image, ref).catch((e: Error) => this.o.log.warn({ image, error: e.message }, 'cannot write image pull record'));
        this.o.log.info({ image, imageRef: ref, ms: this.o.clock.now() - started }, 'pulled image');
        // CreateContainer gets the image ID, as upstream passes the resolved reference.
        const pullMs = this.o.clock.now() - started;
        const st = await this.o.runtime.imageStatus({ image: ref }, false, { timeoutMs: this.o.callTimeoutMs });
        return { ref: st.image?.id ?? ref, pullMs, size: st.image?.size ?? 0 };
      } catch (e) {
        await this.o.records.abandonPull(image).catch(() => undefined);
        this.o.log.warn({ image, error: (e as Error).message }, 'image pull failed');
        throw e;
      }
    };
    if (!this.o.serialize) return run();
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
