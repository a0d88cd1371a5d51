/** What the proxy's e2e tests share besides the namespaces (netns.ts): a recording log, bounded waits, the test's EndpointSlices, the affinity scenario. */
import type { ExecutionContext } from 'ava';
import type { HttpApiClient } from '../../../agent/client/http-api-client';
import { endpointSlicesResource, servicesResource } from '../../../agent/proxy/proxier';
import type { KObject } from '../../../apiserver/api/types';
import type { Topology } from './netns';

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

/** The NodePort Service `web` (port 80 to 8080), without a selector: its slices are the test's, not the EndpointSlice controller's. */
export async function createWeb(c: HttpApiClient): Promise<{ spec: { clusterIP: string; ports: { nodePort: number }[] }; url: string }> {
  const svcObject: KObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { type: 'NodePort', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] } };
  const spec = (await c.create(servicesResource, svcObject)).spec as { clusterIP: string; ports: { nodePort: number }[] };
  return { spec, url: `http://${spec.clusterIP}:80/` };
}

/**
 * ClientIP affinity in either mode: a sticky Service over the first two endpoints (answering a
 * and b); one client gets the same endpoint 12 times. `start` runs the mode's proxier until the
 * signal; `rulesSay` (optional) checks the mode's affinity rules once the Service answers.
 */
export async function checkAffinity(
  t: ExecutionContext,
  c: HttpApiClient,
  n: Topology,
  start: (signal: AbortSignal) => Promise<void>,
  rulesSay?: () => Promise<boolean>,
): Promise<void> {
  const svcObject: KObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'sticky', namespace: 'default' }, spec: { sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] } };
  const svc = await c.create(servicesResource, svcObject);
  const url = `http://${(svc.spec as { clusterIP: string }).clusterIP}:80/`;
  await c.create(endpointSlicesResource, endpointSlice([n.endpointIPs[0], n.endpointIPs[1]], 'sticky'));
  const stickyStop = new AbortController();
  const running = start(stickyStop.signal);
  try {
    let first = '';
    t.true(await until(async () => ['a', 'b'].includes((first = await n.get(url))), 100), 'the sticky Service answers');
    if (rulesSay) t.true(await rulesSay(), 'the affinity rules are in place');
    // Without affinity, 12 answers from one endpoint of two happen by chance once in 2,048 runs.
    const answers = new Set<string>();
    for (let i = 0; i < 12; i++) answers.add(await n.get(url));
    t.deepEqual([...answers], [first]);
  } finally {
    stickyStop.abort();
    await running;
  }
}
