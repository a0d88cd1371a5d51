/**
 * The simulator's checkpoint archive: a tar with config.dump and spec.dump in the spirit of
 * CRI-O's (which adds CRIU images), enough for the agent's archive handling to be tested.
 */
import type { ContainerRec, SandboxRec } from './sim-records';
import { tarArchive } from './sim-tar';

export function checkpointArchive(c: ContainerRec, s: SandboxRec | undefined, now: number, runtimeName: string): Buffer {
  const mtime = Math.floor(now / 1000);
  return tarArchive([
    {
      name: 'config.dump',
      mtime,
      data: JSON.stringify({
        id: c.id,
        name: c.config.metadata.name,
        rootfsImage: c.image.repoTags[0] ?? '',
        rootfsImageRef: c.image.id,
        createdTime: new Date(c.createdAt).toISOString(),
        checkpointedTime: new Date(now).toISOString(),
        runtime: runtimeName,
      }),
    },
    {
      name: 'spec.dump',
      mtime,
      data: JSON.stringify({
        annotations: { ...(c.config.annotations ?? {}) },
        process: { args: [...(c.config.command ?? []), ...(c.config.args ?? [])] },
        sandbox: s ? { ...s.config.metadata } : undefined,
      }),
    },
  ]);
}
