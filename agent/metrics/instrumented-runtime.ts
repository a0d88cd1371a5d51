/**
 * Times every promise-returning call of a RuntimeService (upstream's kubelet wraps its CRI client
 * the same way in instrumented_services.go). Operation names are the method names in snake case
 * (list_containers, checkpoint_container, ...), as upstream's operation_type labels are. Streams
 * (getContainerEvents) and close are passed through untimed: their duration is a lifetime.
 */
import { RuntimeError, type RuntimeService } from '../cri';
import type { RuntimeCallObserver } from './agent-metrics';

export function operationName(method: string): string {
  return method.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

function errorCode(e: unknown): string {
  if (e instanceof RuntimeError) return e.code;
  return 'Unknown';
}

/** A RuntimeService that reports each call's latency and failure to `observer`; `now` is in milliseconds. */
export function instrumentRuntime(inner: RuntimeService, observer: RuntimeCallObserver, now: () => number = () => performance.now()): RuntimeService {
  return new Proxy(inner, {
    get(target, prop) {
      // Getters and methods run against the real object (its own fields), never the proxy.
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string' || prop === 'close' || prop === 'getContainerEvents') {
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      const op = operationName(prop);
      return (...args: unknown[]) => {
        const started = now();
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) return result;
        return result.then(
          (v: unknown) => {
            observer.runtimeCall(op, (now() - started) / 1000);
            return v;
          },
          (e: unknown) => {
            observer.runtimeCall(op, (now() - started) / 1000, errorCode(e));
            throw e;
          },
        );
      };
    },
  });
}
