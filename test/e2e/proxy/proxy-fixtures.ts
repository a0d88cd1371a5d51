/** What the proxy's e2e tests share besides the namespaces (netns.ts): a recording log, bounded waits, the test's EndpointSlices. */
import type { KObject } from '../../../apiserver/api/types';

/** A Log that keeps warnings and errors (a test asserts there were no failures). */
export function recordingLog(): { log: { debug: () => void; info: () => void; warn: (o: object, m: string) => void; error: (o: object, m: string) => void }; warnings: string[] } {
  const warnings: string[] = [];
  const keep = (o: object, m: string) => void warnings.push(`${m} ${JSON.stringify(o)}`);
  return { log: { debug: () => undefined, info: () => undefined, warn: keep, error: keep }, warnings };
}

/** Tries `probe` at most `attempts` times until it answers true. */
export async function until(probe: () => Promise<boolean> | boolean, attempts: number): Promise<boolean> {
  for (let i = 0; i < attempts; i++) if (await probe()) return true;
  return false;
}

/** The test's own EndpointSlice for a Service without a selector (the EndpointSlice controller leaves it alone). */
export const endpointSlice = (ips: string[], svc = 'web', port: Record<string, unknown> = { name: 'http', port: 8080, protocol: 'TCP' }): KObject => ({
  apiVersion: 'discovery.svc.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: `${svc}-manual`, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
  addressType: 'IPv4',
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  ports: [port],
});
