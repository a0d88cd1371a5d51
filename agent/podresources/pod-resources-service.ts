/**
 * The pod resources v1 answers, built from the pods and devices providers (upstream
 * v1PodResourcesServer). Transport-free; pod-resources-server.ts puts it on gRPC.
 *
 * CPU ids and memory are always empty: svc-node has no CPU or memory manager (no exclusive CPUs,
 * no pinned memory or hugepages), which is what upstream reports with the `none` policies.
 * Dynamic resources (DRA) are not supported, so dynamic_resources is empty too.
 */
import type { DeviceSet, DevicesProvider, PodResourcesPod, PodsProvider } from './provider';
import type { AllocatableResourcesResponse, ContainerDevices, GetPodResourcesRequest, GetPodResourcesResponse, ListPodResourcesResponse, PodResources } from './wire-types';
import { NotFoundError } from '../errors';

/** Get asked for a pod the agent does not run. */
export class PodNotFoundError extends NotFoundError {
  override readonly name = 'PodNotFoundError';
  override readonly code = 'SVC_NODE_ERR_POD_NOT_FOUND';
  constructor(namespace: string, name: string) {
    // Upstream's wording.
    super(`pod ${name} in namespace ${namespace} not found`);
  }
}

function toWire(d: DeviceSet): ContainerDevices {
  return {
    resource_name: d.resourceName,
    device_ids: [...d.deviceIds],
    topology: d.topology ? { nodes: d.topology.nodes.map((n) => ({ ID: n.ID })) } : null,
  };
}

export class PodResourcesService {
  constructor(
    private readonly pods: PodsProvider,
    private readonly devices: DevicesProvider,
  ) {}

  /** Every active pod with its containers' resources. */
  list(): ListPodResourcesResponse {
    return { pod_resources: this.pods.activePods().map((p) => this.podResources(p)) };
  }

  /** One pod; throws PodNotFoundError when the agent does not run it. */
  get(req: GetPodResourcesRequest): GetPodResourcesResponse {
    const pod = this.pods.podByName(req.pod_namespace, req.pod_name);
    if (!pod) throw new PodNotFoundError(req.pod_namespace, req.pod_name);
    return { pod_resources: this.podResources(pod) };
  }

  /** What the node can allocate. */
  allocatable(): AllocatableResourcesResponse {
    return { devices: this.devices.allocatable().map(toWire), cpu_ids: [], memory: [] };
  }

  private podResources(p: PodResourcesPod): PodResources {
    return {
      name: p.name,
      namespace: p.namespace,
      containers: p.containers.map((c) => ({
        name: c,
        devices: this.devices.devicesFor(p.uid, c).map(toWire),
        cpu_ids: [],
        memory: [],
        dynamic_resources: [],
      })),
    };
  }
}
