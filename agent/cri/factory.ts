/**
 * Chooses the RuntimeService for the configured endpoints: `sim://[name]` gives the in-process
 * simulator (runtime and images together), unix sockets give the gRPC client. Mixing a simulated
 * runtime with a real image service (or the reverse) is refused: their images would disagree.
 */
import { parseEndpoint } from './endpoint';
import { GrpcRuntimeService, type GrpcRuntimeOptions } from './grpc-client';
import type { RuntimeService } from './runtime-service';
import { Simulator } from './simulator';
import type { SimulatorOptions } from './sim-options';

export interface RuntimeServiceOptions extends GrpcRuntimeOptions {
  /** Used for sim:// endpoints; the endpoint's name becomes the simulator's name unless set here. */
  simulator?: SimulatorOptions;
}

/**
 * Builds (does not connect) the RuntimeService for containerRuntimeEndpoint and
 * imageServiceEndpoint ('' means the same as the runtime's). Throws Error for unusable or
 * mismatched endpoints. Call connect() on the result before use.
 */
export function createRuntimeService(endpoint: string, imageEndpoint: string = '', opts: RuntimeServiceOptions = {}): RuntimeService {
  const rt = parseEndpoint(endpoint);
  const img = parseEndpoint(imageEndpoint || endpoint);
  if (rt.kind === 'sim' || img.kind === 'sim') {
    if (rt.kind !== 'sim' || img.kind !== 'sim' || rt.name !== img.name) {
      throw new Error(
        `container runtime endpoint ${endpoint} and image service endpoint ${imageEndpoint} must both name the same sim:// runtime`,
      );
    }
    return new Simulator({ name: rt.name, ...(rt.handlers ? { runtimeHandlers: rt.handlers } : {}), ...opts.simulator });
  }
  return new GrpcRuntimeService(endpoint, imageEndpoint || endpoint, opts);
}
