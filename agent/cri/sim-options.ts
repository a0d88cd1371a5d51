/**
 * Knobs of the in-process CRI simulator: which images exist, how containers behave (crash after
 * N ms, ignore SIGTERM, fail to start), canned exec results, and runtime-level switches
 * (network readiness, missing RPCs, the API version it claims).
 */
import type { Clock } from '../platform/clock';
import type { RuntimeErrorCode } from './errors';

/** An image the simulator knows: a reference, or details. */
export type SimImageSpec =
  | string
  | {
      ref: string;
      /** Bytes (default 1 MiB plus a little per name, so sizes differ). */
      size?: number;
      uid?: number;
      username?: string;
      pinned?: boolean;
    };

/**
 * A pull that fails: the reference (any name form; matched once normalised), and how. By default
 * NotFound with containerd's "failed to resolve reference ... not found" message.
 */
export type PullFailureSpec =
  | string
  | {
      image: string;
      /** The gRPC code the runtime answers (default NotFound). */
      code?: RuntimeErrorCode;
      /** The runtime's message (default containerd's for the code NotFound, else "failed to pull image ..."). */
      message?: string;
    };

/** What one ExecSync returns (or how it fails). */
export interface ExecResultSpec {
  stdout?: string | Buffer;
  stderr?: string | Buffer;
  exitCode?: number;
  /** How long the command runs (simulated with the clock); beyond the call's timeout it fails DeadlineExceeded. */
  durationMs?: number;
  /** The exec itself fails (binary missing ...) with this message, code Unknown as runc's errors arrive. */
  error?: string;
}

export interface ExecContext {
  containerId: string;
  containerName: string;
  podName: string;
  podNamespace: string;
  /** Normalised image reference the container runs. */
  image: string;
  cmd: string[];
}

/** Decides an exec's result; undefined falls through to the built-in commands (echo, true, false, sleep, sh -c "exit N"). */
export type ExecHandler = (ctx: ExecContext) => ExecResultSpec | undefined;

/**
 * How matching containers behave. A rule matches when every selector it sets equals the
 * container's; the first matching rule applies. Unset fields take the defaults noted.
 */
export interface ContainerBehaviour {
  /** Selector: image as written in the container config, or normalised. */
  image?: string;
  /** Selector: container name. */
  name?: string;
  /** Selector: the pod's name / namespace (sandbox metadata). */
  podName?: string;
  podNamespace?: string;

  /** The container exits this long after it starts (default: runs until stopped). */
  exitAfterMs?: number;
  /** Exit code for exitAfterMs (default 0). */
  exitCode?: number;
  /** Status reason for that exit (default Completed for 0, Error otherwise; OOMKilled is a good alternative). */
  exitReason?: string;
  /** CreateContainer fails with this message (code Unknown, as runtime errors arrive). */
  createError?: string;
  /** StartContainer fails with this message; the container is left EXITED with exit code 128, as runc start failures are. */
  startError?: string;
  /** Time the process takes to exit after the stop signal (default 0; Infinity: ignores SIGTERM, killed at the grace period). */
  stopDelayMs?: number;
  /** Exit code after a graceful stop (default 143, death by SIGTERM); a kill is always 137. */
  stopExitCode?: number;
  /** Exec results by command line (cmd joined by spaces). */
  exec?: Record<string, ExecResultSpec>;
  /** CPU use while running, in nanocores (default 10,000,000: 10m). */
  cpuNanoCores?: number;
  /** Working set while running (default 4 MiB). */
  memoryBytes?: number;
  /** Size of the writable layer in its checkpoint archive's rootfs-diff.tar (default 16 KiB; the pod annotation sim.svc.io/writable-layer-bytes overrides). */
  checkpointLayerBytes?: number;
  /** Lines written to the container's log file when it starts (CRI log format, stream stdout). */
  logLines?: string[];
}

export interface SimulatorOptions {
  /** Distinguishes simulated nodes: part of every generated ID (default "sim"). */
  name?: string;
  clock?: Clock;
  runtimeName?: string;
  runtimeVersion?: string;
  /** What Version reports as runtime_api_version (default "v1"); anything else makes connect() refuse, for tests. */
  runtimeApiVersion?: string;
  /** Images present at start (default DEFAULT_SIM_IMAGES). */
  images?: SimImageSpec[];
  /**
   * Images the simulated registry knows, with their details (size, user). Given, it is the whole
   * registry: other references fail NotFound (a closed registry, for tests of pull failures).
   * Unset, the registry serves every reference, with details derived from the name, as a public
   * registry would: `kubectl run web --image=nginx` pulls and runs on a simulated node.
   */
  registryImages?: SimImageSpec[];
  /** Pulls of these references fail, whatever the registry holds (opt-in failures for tests); publishImage lifts one. */
  pullFailures?: PullFailureSpec[];
  behaviours?: ContainerBehaviour[];
  exec?: ExecHandler;
  /** Pod IPs come from this IPv4 CIDR (default 10.88.0.0/16, as containerd's sample CNI config). */
  podCidr?: string;
  /** GetContainerEvents is served (default true; false answers Unimplemented like containerd 1.6). */
  events?: boolean;
  /** CheckpointContainer is served (default true; false answers Unimplemented like containerd 1.6). */
  checkpoint?: boolean;
  /** ListPodSandboxStats is served (default true; false answers Unimplemented, as a runtime without it). */
  podSandboxStats?: boolean;
  /** Container log files are written under the sandbox's logDirectory (default true). */
  writeLogs?: boolean;
  /**
   * CRI runtime handlers RunPodSandbox accepts besides the default ('', always known); another is
   * refused NotFound with containerd's message, as containerd refuses a handler its config lacks.
   * Default DEFAULT_SIM_HANDLERS (containerd's stock config names runc only).
   */
  runtimeHandlers?: readonly string[];
  /** Reported in ImageFsInfo and stats as the filesystems' mount point (default /var/lib/svc-sim). */
  root?: string;
}

export const DEFAULT_SIM_HANDLERS: readonly string[] = ['runc'];

export const DEFAULT_SIM_IMAGES: readonly string[] = [
  'registry.k8s.io/pause:3.10',
  'docker.io/library/busybox:latest',
  'svc.local/busybox:latest',
];
