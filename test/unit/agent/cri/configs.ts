/** Sandbox and container configs shaped like the ones the pod workers will send, for CRI tests. */
import type { ContainerConfig, PodSandboxConfig } from '../../../../agent/cri/types';

export function sandboxConfig(name: string, opts: { hostNetwork?: boolean; namespace?: string; attempt?: number; logDirectory?: string; sharePid?: boolean } = {}): PodSandboxConfig {
  const namespace = opts.namespace ?? 'default';
  const uid = `uid-${namespace}-${name}`;
  const config: PodSandboxConfig = {
    metadata: { name, namespace, uid, attempt: opts.attempt ?? 0 },
    labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': namespace, 'io.kubernetes.pod.uid': uid },
    annotations: { 'svc.io/config.source': 'test' },
    linux: {
      securityContext: {
        namespaceOptions: {
          ...(opts.hostNetwork ? { network: 'NODE' as const } : {}),
          ...(opts.sharePid ? {} : { pid: 'CONTAINER' as const }),
        },
      },
    },
  };
  if (!opts.hostNetwork) config.hostname = name;
  if (opts.logDirectory) config.logDirectory = opts.logDirectory;
  return config;
}

export function containerConfig(name: string, image: string, opts: { command?: string[]; args?: string[]; attempt?: number; logPath?: string } = {}): ContainerConfig {
  const config: ContainerConfig = {
    metadata: { name, attempt: opts.attempt ?? 0 },
    image: { image },
    labels: { 'io.kubernetes.container.name': name },
    annotations: { 'io.kubernetes.container.restartCount': String(opts.attempt ?? 0) },
    envs: [{ key: 'GREETING', value: 'hello world' }],
  };
  if (opts.command) config.command = opts.command;
  if (opts.args) config.args = opts.args;
  if (opts.logPath) config.logPath = opts.logPath;
  return config;
}
