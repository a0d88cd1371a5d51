import type { Server } from '@grpc/grpc-js';

/**
 * Stops a gRPC server the polite way first (in-flight calls finish), then by force after
 * `graceMs`, so a client holding a stream open (ListAndWatch, GetContainerEvents) cannot keep the
 * agent from shutting down.
 */
export function shutdownGrpcServer(server: Server, graceMs = 2000): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
