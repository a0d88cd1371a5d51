/**
 * CRI runtime.v1 ImageService objects as the agent sees them (conventions: ./types).
 */
import type { ImageSpec, StringMap } from './container-types';
import type { FilesystemUsage } from './stats-types';

// ------------------------------------------------------------------ images

export interface Image {
  /** Image ID (config digest, "sha256:..."). */
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  /** User the image runs as, when numeric. */
  uid?: number;
  username: string;
  spec?: ImageSpec;
  /** Pinned images are never garbage-collected. */
  pinned: boolean;
}

export interface ImageStatusResult {
  /** Undefined when the image is not present (not an error, as upstream). */
  image?: Image;
  info: StringMap;
}

/** Registry credentials for PullImage; never logged. */
export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface ImageFsInfo {
  imageFilesystems: FilesystemUsage[];
  containerFilesystems: FilesystemUsage[];
}
