/** What pod sources tell the pod manager: full sets after a (re)list or scan, single changes after that. */
import type { Pod } from '../api/core-v1';

export type SourceName = 'api' | 'file';

export interface PodSourceHandler {
  /** The source's complete set of pods (after a list or a scan); pods not in it are gone. */
  snapshot(source: SourceName, pods: Pod[]): void;
  /** One pod was added or changed. */
  upsert(source: SourceName, pod: Pod): void;
  /** One pod is gone from the source. */
  remove(source: SourceName, pod: Pod): void;
}
