/**
 * Where nodeInfo.containerRuntimeVersion comes from. The CRI client (a later issue) implements
 * this from RuntimeService.Version ("containerd://1.7.x"); until then the agent reports
 * "unknown://" rather than pretending to know.
 */
export interface RuntimeStatusProvider {
  /** "<runtime name>://<version>"; resolves "unknown://" when the runtime cannot be asked. Never rejects. */
  runtimeVersion(): Promise<string>;
}

export const unknownRuntime: RuntimeStatusProvider = {
  runtimeVersion: async () => 'unknown://',
};
