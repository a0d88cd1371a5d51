/**
 * The simulator's checkpoint archive, laid out like CRI-O's (the runtime whose archives
 * `kubectl checkpoint` users restore): config.dump (the container's identity and image),
 * spec.dump (an OCI runtime spec of the container), checkpoint/ (CRIU's images; here a process
 * tree and a memory-pages stand-in, since there is no CRIU) and rootfs-diff.tar (the container's
 * writable layer: what it changed on top of its image). The writable layer's size is set by the
 * container behaviour's checkpointLayerBytes or, for agents running the simulator in-process, the
 * pod annotation sim.svc.io/writable-layer-bytes (benchmarks ask for 10 MB this way).
 */
import type { ContainerRec, SandboxRec } from './sim-records';
import { tarArchive, type TarEntry } from './sim-tar';

/** Pod annotation giving the size of the simulated writable layer in bytes. */
export const WRITABLE_LAYER_ANNOTATION = 'sim.svc.io/writable-layer-bytes';
const DEFAULT_LAYER_BYTES = 16 * 1024;
const DEFAULT_PAGES_BYTES = 64 * 1024;
/** A simulated layer larger than this is refused (the annotation comes from any pod author). */
export const MAX_LAYER_BYTES = 1024 * 1024 * 1024;

/** The writable layer's size for a container: the annotation, else the behaviour, else 16 KiB. Throws on a bad annotation. */
export function writableLayerBytes(c: ContainerRec, s: SandboxRec | undefined): number {
  const a = s?.config.annotations?.[WRITABLE_LAYER_ANNOTATION];
  if (a !== undefined) {
    const n = /^\d+$/.test(a) ? Number(a) : NaN;
    if (!Number.isSafeInteger(n) || n > MAX_LAYER_BYTES) throw new Error(`annotation ${WRITABLE_LAYER_ANNOTATION}=${JSON.stringify(a)}: must be a byte count up to ${MAX_LAYER_BYTES}`);
    return n;
  }
  return c.behaviour.checkpointLayerBytes ?? DEFAULT_LAYER_BYTES;
}

/** size bytes of a repeating pattern seeded by the container ID (cheap, and not all zeros). */
function filler(size: number, seed: string): Buffer {
  const b = Buffer.allocUnsafe(size);
  const unit = Buffer.from(`${seed}:`.repeat(Math.ceil(256 / (seed.length + 1))).slice(0, 256), 'utf8');
  if (size > 0) b.fill(unit);
  return b;
}

export function checkpointArchive(c: ContainerRec, s: SandboxRec | undefined, now: number, runtimeName: string): Buffer {
  const mtime = Math.floor(now / 1000);
  const layerBytes = writableLayerBytes(c, s);
  const args = [...(c.config.command ?? []), ...(c.config.args ?? [])];
  // The writable layer as its own tar, as CRI-O stores it: a file the container wrote, and its hostname.
  const rootfsDiff = tarArchive([
    { name: 'etc/hostname', mtime, data: `${s?.config.hostname || s?.config.metadata.name || c.id}\n`, mode: 0o644 },
    { name: 'var/lib/app/data.bin', mtime, data: filler(layerBytes, c.id), mode: 0o644 },
  ]);
  const entries: TarEntry[] = [
    {
      name: 'config.dump',
      mtime,
      data: JSON.stringify({
        id: c.id,
        name: c.config.metadata.name,
        rootfsImage: c.image.repoTags[0] ?? '',
        rootfsImageRef: c.image.id,
        rootfsImageName: c.config.image.image,
        runtime: runtimeName,
        createdTime: new Date(c.createdAt).toISOString(),
        checkpointedTime: new Date(now).toISOString(),
        restoreFileSystem: ['rootfs-diff.tar'],
      }),
    },
    {
      name: 'spec.dump',
      mtime,
      data: JSON.stringify({
        ociVersion: '1.1.0',
        process: {
          args,
          env: (c.config.envs ?? []).map((e) => `${e.key}=${e.value}`),
          cwd: c.config.workingDir || '/',
        },
        root: { path: 'rootfs' },
        hostname: s?.config.hostname ?? '',
        annotations: {
          ...(c.config.annotations ?? {}),
          'io.kubernetes.pod.name': s?.config.metadata.name ?? '',
          'io.kubernetes.pod.namespace': s?.config.metadata.namespace ?? '',
          'io.kubernetes.pod.uid': s?.config.metadata.uid ?? '',
          'io.kubernetes.container.name': c.config.metadata.name,
        },
        linux: c.resources ? { resources: c.resources } : {},
      }),
    },
    // CRIU's image directory, reduced to a process tree and a memory stand-in the size of a small process.
    { name: 'checkpoint/pstree.img', mtime, data: JSON.stringify({ processes: [{ pid: 1, args }] }) },
    { name: 'checkpoint/pages-1.img', mtime, data: filler(DEFAULT_PAGES_BYTES, `${c.id}-pages`) },
    { name: 'rootfs-diff.tar', mtime, data: rootfsDiff },
  ];
  return tarArchive(entries);
}
