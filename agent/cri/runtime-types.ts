/**
 * CRI runtime.v1 Version and Status answers as the agent sees them (conventions: ./types).
 */
import type { StringMap } from './container-types';

// ------------------------------------------------------------------ version and status

export interface VersionInfo {
  /** Version of the CRI the runtime reports (not meaningful; kept as sent). */
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  /** "v1" for runtimes serving runtime.v1. */
  runtimeApiVersion: string;
}

export interface RuntimeCondition {
  /** RuntimeReady or NetworkReady (upstream's required condition types), or runtime-specific. */
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export interface RuntimeHandlerInfo {
  name: string;
  recursiveReadOnlyMounts: boolean;
  userNamespaces: boolean;
}

export interface RuntimeStatus {
  conditions: RuntimeCondition[];
  /** Verbose runtime information; empty unless asked for. */
  info: StringMap;
  handlers: RuntimeHandlerInfo[];
  features: { supplementalGroupsPolicy: boolean; userNamespacesHostNetwork: boolean; mountOptions: boolean };
}
