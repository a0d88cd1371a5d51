/**
 * The connect-time rule shared by every RuntimeService: the runtime must report
 * runtime_api_version "v1" (upstream kubelet refuses runtimes that do not serve runtime.v1 since
 * 1.26 and stopped falling back to v1alpha2).
 */
import { RuntimeError, isRuntimeError } from './errors';
import { CRI_API_VERSION } from './runtime-service';
import type { VersionInfo } from './types';

/** Returns v when it speaks runtime.v1, else throws RuntimeError UnsupportedVersion naming runtime, endpoint and version. */
export function requireV1(v: VersionInfo, endpoint: string): VersionInfo {
  if (v.runtimeApiVersion === CRI_API_VERSION) return v;
  const who = [v.runtimeName, v.runtimeVersion].filter((s) => s !== '').join(' ') || 'unnamed';
  throw new RuntimeError(
    'UnsupportedVersion',
    `runtime ${who} at ${endpoint} speaks CRI ${v.runtimeApiVersion || '(no version)'}; svc-node needs runtime.${CRI_API_VERSION}`,
    'Version',
  );
}

/**
 * Rewrites a failed connect-time Version call into a message an operator can act on.
 * UNIMPLEMENTED there means the socket serves gRPC but not the runtime.v1 service.
 */
export function connectError(e: unknown, endpoint: string, timeoutMs: number): unknown {
  if (isRuntimeError(e, 'Unimplemented')) {
    return new RuntimeError(
      'UnsupportedVersion',
      `runtime at ${endpoint} does not serve CRI runtime.${CRI_API_VERSION} (${e.message}); svc-node needs runtime.${CRI_API_VERSION}`,
      'Version',
      { cause: e },
    );
  }
  if (isRuntimeError(e, 'DeadlineExceeded') || isRuntimeError(e, 'Unavailable')) {
    return new RuntimeError(
      e.code,
      `container runtime at ${endpoint} did not answer Version within ${formatDuration(timeoutMs)}: ${e.message}`,
      'Version',
      { cause: e },
    );
  }
  return e;
}

/** "300ms", "10s", "2m": how long we waited, for messages. */
export function formatDuration(ms: number): string {
  if (ms < 10_000) return `${Math.round(ms)}ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)}s`;
  return `${Math.round(ms / 60_000)}m`;
}
