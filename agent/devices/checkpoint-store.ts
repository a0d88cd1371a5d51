/**
 * The device checkpoint on disk (upstream: the device manager's checkpoint manager, file
 * kubelet_internal_checkpoint): read once at start, where a corrupt or unreadable file is logged
 * and reported as lost (allocations are then rebuilt from the runtime), and written after every
 * change, with writes requested meanwhile sharing one (./group-writer). The state written is taken
 * from `snapshot` when a write starts; the store holds none of it.
 */
import path from 'node:path';
import type { Log } from '../platform/logger';
import { CHECKPOINT_FILE, CheckpointCorruptError, readCheckpoint, writeCheckpoint, type CheckpointData } from './checkpoint';
import { GroupWriter } from './group-writer';

export interface CheckpointStoreOptions {
  /** <root-dir>/device-plugins. */
  dir: string;
  log: Log;
  /** The state to write, as of now (allocations and advertised devices). */
  snapshot: () => CheckpointData;
}

/** What start found: the checkpoint's data (undefined when there was none), or `lost` when it could not be used. */
export interface LoadedCheckpoint {
  data: CheckpointData | undefined;
  lost: boolean;
}

export class CheckpointStore {
  private readonly writer = new GroupWriter(() => this.writeNow());

  constructor(private readonly o: CheckpointStoreOptions) {}

  /** Reads the checkpoint. A corrupt or unreadable one is logged and reported lost. Never rejects. */
  async load(): Promise<LoadedCheckpoint> {
    try {
      return { data: await readCheckpoint(this.o.dir), lost: false };
    } catch (e) {
      const corrupt = e instanceof CheckpointCorruptError;
      this.o.log.warn(
        { file: path.join(this.o.dir, CHECKPOINT_FILE), error: (e as Error).message },
        corrupt ? 'device checkpoint is corrupt; starting without it, rebuilding allocations from the runtime' : 'cannot read the device checkpoint; rebuilding allocations from the runtime',
      );
      return { data: undefined, lost: true };
    }
  }

  /** Writes the checkpoint (shared with concurrent requests, see GroupWriter). Never rejects. */
  persist(): Promise<void> {
    return this.writer.request();
  }

  /** Resolves once no write is running or queued (as of the call). */
  idle(): Promise<void> {
    return this.writer.idle();
  }

  private async writeNow(): Promise<void> {
    try {
      await writeCheckpoint(this.o.dir, this.o.snapshot());
    } catch (e) {
      this.o.log.error({ dir: this.o.dir, error: (e as Error).message }, 'cannot write the device checkpoint');
    }
  }
}
