/**
 * The simulator's image service (CRI's ImageService): list, status, pull from the pretend
 * registry, remove (refused while a container uses the image, as containerd) and the filesystem
 * usage of images and writable layers. The images are the SimImageStore's, shared with
 * CreateContainer; the Simulator delegates these RPCs here.
 */
import path from 'node:path';
import type { Clock } from '../platform/clock';
import { RuntimeError } from './errors';
import type { CallOptions } from './runtime-service';
import type { SimImageStore } from './sim-images';
import { imageRef, writableBytes } from './sim-records';
import type { SimState } from './sim-state';
import type { AuthConfig, Image, ImageFsInfo, ImageSpec, ImageStatusResult, PodSandboxConfig } from './types';

export class SimImageService {
  constructor(
    private readonly images: SimImageStore,
    private readonly state: SimState,
    private readonly clock: Clock,
    private readonly root: string,
    /** The Simulator's RPC entry: the gate, then catching up with the clock. */
    private readonly begin: (rpc: string, opts?: CallOptions) => Promise<void>,
  ) {}

  async listImages(filter?: ImageSpec, opts?: CallOptions): Promise<Image[]> {
    await this.begin('ListImages', opts);
    return this.images.list(filter);
  }

  async imageStatus(image: ImageSpec, _verbose = false, opts?: CallOptions): Promise<ImageStatusResult> {
    await this.begin('ImageStatus', opts);
    const found = this.images.resolve(image.image);
    return found ? { image: found, info: {} } : { info: {} };
  }

  async pullImage(image: ImageSpec, _auth?: AuthConfig, _sandboxConfig?: PodSandboxConfig, opts?: CallOptions): Promise<string> {
    await this.begin('PullImage', opts);
    return imageRef(this.images.pull(image.image));
  }

  async removeImage(image: ImageSpec, opts?: CallOptions): Promise<void> {
    await this.begin('RemoveImage', opts);
    const found = this.images.resolve(image.image);
    if (!found) return;
    for (const c of this.state.containers.values()) {
      if (c.image.id === found.id) throw new RuntimeError('FailedPrecondition', `image "${image.image}" is in use by container ${c.id}`, 'RemoveImage');
    }
    this.images.remove(image.image);
  }

  async imageFsInfo(opts?: CallOptions): Promise<ImageFsInfo> {
    await this.begin('ImageFsInfo', opts);
    const now = this.clock.now();
    const images = this.images.list();
    let layers = 0;
    for (const c of this.state.containers.values()) layers += writableBytes(c);
    return {
      imageFilesystems: [
        { timestamp: now, mountpoint: path.join(this.root, 'images'), usedBytes: images.reduce((n, i) => n + i.size, 0), inodesUsed: images.length * 64 },
      ],
      containerFilesystems: [
        { timestamp: now, mountpoint: path.join(this.root, 'snapshots'), usedBytes: layers, inodesUsed: this.state.containers.size * 8 },
      ],
    };
  }
}
