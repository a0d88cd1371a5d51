/**
 * A container's environment as upstream's kubelet builds it (kubelet_pods.go makeEnvironmentVariables):
 * envFrom sources first (configMapRef, secretRef, with prefix), then env in order, where later
 * entries win and values may refer to earlier ones as $(NAME) ($$ escapes). valueFrom reads the
 * pod's fields (fieldRef), its resources (resourceFieldRef), and ConfigMap and Secret keys;
 * a missing object or key is a CreateContainerConfigError unless the reference is optional.
 * Service link variables (enableServiceLinks) are not produced: svc-node has no service list.
 */
import type { KeyValue } from '../cri';
import { parseQuantity } from '../config/quantity';
import { configMapValues, secretValues, type ConfigObjectGetter } from './config-objects';
import type { Container, EnvVar, Pod } from '../api/core-v1';
import { containerLimits, containerRequests } from './resources';
import { configError } from './sync-errors';

export interface EnvContext {
  objects: ConfigObjectGetter;
  /** The pod's IPs (empty before the sandbox exists) and the node's. */
  podIPs: string[];
  hostIPs: string[];
  /** Node allocatable, used when a resourceFieldRef names a limit the container does not set. */
  nodeCpuMilli: number;
  nodeMemoryBytes: number;
  signal?: AbortSignal;
}

/** Expands $(VAR) references from `lookup` as upstream's third_party/forked/golang/expansion: unknown stay as written, $$ is a literal $. */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
      continue;
    }
    if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const v = lookup(name);
      out += v !== undefined ? v : `$(${name})`;
      i = close;
      continue;
    }
    out += ch;
  }
  return out;
}

function fieldValue(pod: Pod, fieldPath: string, ctx: EnvContext): string {
  const m = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(fieldPath);
  if (m) {
    const map = m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
    return map?.[m[2] ?? ''] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? 'default';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'spec.nodeName':
      return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? '';
    case 'status.hostIP':
      return ctx.hostIPs[0] ?? '';
    case 'status.hostIPs':
      return ctx.hostIPs.join(',');
    case 'status.podIP':
      return ctx.podIPs[0] ?? '';
    case 'status.podIPs':
      return ctx.podIPs.join(',');
    default:
      throw configError(`unsupported fieldPath: ${fieldPath}`);
  }
}

function resourceValue(pod: Pod, self: Container, ref: NonNullable<EnvVar['valueFrom']>['resourceFieldRef'], ctx: EnvContext): string {
  if (!ref) return '';
  const target = ref.containerName ? [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c) => c.name === ref.containerName) : self;
  if (!target) throw configError(`resourceFieldRef: container ${JSON.stringify(ref.containerName)} not found in the pod`);
  let divisor = 1;
  if (ref.divisor !== undefined && ref.divisor !== '0' && ref.divisor !== 0) {
    try {
      divisor = typeof ref.divisor === 'number' ? ref.divisor : parseQuantity(ref.divisor);
    } catch (e) {
      throw configError(`resourceFieldRef: ${(e as Error).message}`);
    }
  }
  const lim = containerLimits(target);
  const req = containerRequests(target);
  let value: number;
  switch (ref.resource) {
    case 'limits.cpu':
      value = (lim.cpuMilli ?? ctx.nodeCpuMilli) / 1000;
      break;
    case 'requests.cpu':
      value = (req.cpuMilli ?? 0) / 1000;
      break;
    case 'limits.memory':
      value = lim.memory ?? ctx.nodeMemoryBytes;
      break;
    case 'requests.memory':
      value = req.memory ?? 0;
      break;
    default:
      throw configError(`resourceFieldRef: unsupported resource ${JSON.stringify(ref.resource)}`);
  }
  // Upstream rounds up to the divisor (a CPU limit of 250m with divisor 1 is "1").
  return String(Math.ceil(value / divisor));
}

/** The container's environment, in the order the runtime gets it. Rejects ContainerSyncError (CreateContainerConfigError). */
export async function containerEnv(pod: Pod, c: Container, ctx: EnvContext): Promise<KeyValue[]> {
  const ns = pod.metadata.namespace ?? 'default';
  const env = new Map<string, string>();
  for (const src of c.envFrom ?? []) {
    const prefix = src.prefix ?? '';
    if (src.configMapRef) {
      const cm = await ctx.objects.configMap(ns, src.configMapRef.name, ctx.signal);
      if (!cm) {
        if (src.configMapRef.optional) continue;
        throw configError(`configmap "${src.configMapRef.name}" not found`);
      }
      for (const [k, v] of Object.entries(cm.data ?? {})) env.set(prefix + k, v);
    }
    if (src.secretRef) {
      const s = await ctx.objects.secret(ns, src.secretRef.name, ctx.signal);
      if (!s) {
        if (src.secretRef.optional) continue;
        throw configError(`secret "${src.secretRef.name}" not found`);
      }
      for (const [k, v] of Object.entries(secretValues(s))) env.set(prefix + k, v.toString('utf8'));
    }
  }
  for (const e of c.env ?? []) {
    const vf = e.valueFrom;
    if (!vf) {
      env.set(e.name, expand(e.value ?? '', (n) => env.get(n)));
      continue;
    }
    if (vf.fieldRef) env.set(e.name, fieldValue(pod, vf.fieldRef.fieldPath, ctx));
    else if (vf.resourceFieldRef) env.set(e.name, resourceValue(pod, c, vf.resourceFieldRef, ctx));
    else if (vf.configMapKeyRef) {
      const ref = vf.configMapKeyRef;
      const cm = await ctx.objects.configMap(ns, ref.name ?? '', ctx.signal);
      if (!cm) {
        if (ref.optional) continue;
        throw configError(`configmap "${ref.name ?? ''}" not found`);
      }
      const v = configMapValues(cm)[ref.key];
      if (v === undefined) {
        if (ref.optional) continue;
        throw configError(`couldn't find key ${ref.key} in ConfigMap ${ns}/${ref.name ?? ''}`);
      }
      env.set(e.name, v.toString('utf8'));
    } else if (vf.secretKeyRef) {
      const ref = vf.secretKeyRef;
      const s = await ctx.objects.secret(ns, ref.name ?? '', ctx.signal);
      if (!s) {
        if (ref.optional) continue;
        throw configError(`secret "${ref.name ?? ''}" not found`);
      }
      const v = secretValues(s)[ref.key];
      if (v === undefined) {
        if (ref.optional) continue;
        throw configError(`couldn't find key ${ref.key} in Secret ${ns}/${ref.name ?? ''}`);
      }
      env.set(e.name, v.toString('utf8'));
    }
  }
  return [...env].map(([key, value]) => ({ key, value }));
}
