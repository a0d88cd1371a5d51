/**
 * Where nodeInfo.containerRuntimeVersion comes from. cri/runtime-health.ts satisfies it from
 * RuntimeService.Version ("containerd://1.6.x"), and as a ReadinessCheck turns the node NotReady
 * with messages naming the container runtime ("container runtime is down", "container runtime
 * not ready: ...") when Status fails for 30 s or reports a condition false;
 * test/e2e/cri/runtime-restart.test.ts kills and restarts a real containerd under the agent.
 * unknownRuntime stands in before a runtime is configured, rather than pretending to know.
 */
export interface RuntimeStatusProvider {
  /** "<runtime name>://<version>"; resolves "unknown://" when the runtime cannot be asked. Never rejects. */
  runtimeVersion(): Promise<string>;
}

export const unknownRuntime: RuntimeStatusProvider = {
  runtimeVersion: () => Promise.resolve('unknown://'),
};
