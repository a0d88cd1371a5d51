import type { Logger } from 'pino';
import { runWorkers, WorkQueue } from '../../common/informer/work-queue';
import type { Clock } from '../../common/informer/clock';
import { remoteApiOf, type RemoteApi, type RemoteApis, type RemoteOpenApi } from '../aggregator/remote-apis';
import { openApiDue } from '../aggregator/remote-openapi';
import { errors, isNotFound } from '../api/errors';
import type { KObject } from '../api/types';
import type { ResourceType } from '../registry/resource-type';
import { availableCondition } from '../registry/types/apiservices';
import type { StoreInformers } from '../store/list-watch';
import { waitForCacheSync } from '../store/list-watch';
import type { ObjectStore } from '../store/object-store';
import { controllerContext } from '../store/system-context';
import { resolveTarget, unresolved, SERVICE_NAME_LABEL, type ServiceLookup } from '../registry/service-resolver';

const ctx = { ...controllerContext('apiservice-availability-controller'), subresource: 'status' };

/** How often each remote APIService's discovery is checked again (upstream's availability controller resyncs every 30 s). */
export const RECHECK_MS = 30_000;

/** Fetches /apis/<group>/<version> from the server: the status and the parsed body, or rejects when unreachable. */
export type DiscoveryCheck = (api: NonNullable<ReturnType<typeof remoteApiOf>>, target: { host: string; port: number; servername: string }) => Promise<{ status: number; body: unknown }>;

export interface AvailabilityOptions {
  apiServices: ResourceType;
  services: ResourceType;
  endpointSlices: ResourceType;
  remote: RemoteApis;
  check: DiscoveryCheck;
  informers: StoreInformers;
  clock: Clock;
  log: Logger;
  now?: () => Date;
  /** Fetches an available server's OpenAPI documents (aggregator/remote-openapi.ts); absent: none are merged. */
  openApi?: (api: RemoteApi, target: { host: string; port: number; servername: string }) => Promise<RemoteOpenApi>;
}

/**
 * Upstream's APIServiceAvailability controller: keeps each APIService's Available condition
 * current (Local for local ones; for remote ones ServiceNotFound, MissingEndpoints,
 * FailedDiscoveryCheck or Passed, with upstream's messages), rechecks every 30 s and when the
 * Services or EndpointSlices it points at change, and feeds the aggregator's table of remote APIs with
 * their availability and discovery documents.
 */
export class ApiServiceAvailability {
  constructor(
    private readonly store: ObjectStore,
    private readonly o: AvailabilityOptions,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    const { informers } = this.o;
    const apis = informers.informer(this.o.apiServices);
    const services = informers.informer(this.o.services);
    const slices = informers.informer(this.o.endpointSlices);
    const queue = new WorkQueue({ clock: this.o.clock });
    apis.addEventHandler(
      {
        onAdd: (a) => (this.o.remote.upsert(a), queue.add(a.metadata.name!)),
        onUpdate: (_old, a) => (this.o.remote.upsert(a), queue.add(a.metadata.name!)),
        onDelete: (a) => this.o.remote.remove(a.metadata.name!),
      },
      { signal },
    );
    // A Service or its EndpointSlices changing re-checks the APIServices that point at it.
    const recheck = (nameOf: (o: KObject) => string | undefined) => (o: KObject) => {
      for (const a of apis.store.list()) {
        const svc = remoteApiOf(a)?.service;
        if (svc && svc.namespace === o.metadata.namespace && svc.name === nameOf(o)) queue.add(a.metadata.name!);
      }
    };
    for (const [inf, byService] of [
      [services, recheck((o) => o.metadata.name)],
      [slices, recheck((o) => o.metadata.labels?.[SERVICE_NAME_LABEL])],
    ] as const) {
      inf.addEventHandler({ onAdd: byService, onUpdate: (_o, n) => byService(n), onDelete: byService }, { signal });
    }
    informers.start(signal);
    if (!(await waitForCacheSync(signal, apis, services, slices))) return;
    const lookup: ServiceLookup = {
      service: (ns, name) => Promise.resolve(services.get(`${ns}/${name}`)),
      endpointSlices: (ns, name) => Promise.resolve(slices.store.byIndex('namespace', ns).filter((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name)),
    };
    await runWorkers(
      queue,
      async (name) => {
        const a = apis.get(name);
        if (!a) return;
        await this.sync(a, lookup);
        if (remoteApiOf(a)) queue.addAfter(name, RECHECK_MS);
      },
      signal,
      { onError: (key, err) => this.o.log.warn({ err, apiService: key }, 'checking an APIService failed; retrying') },
    );
  }

  /** Checks one APIService and writes its Available condition when it changed. */
  async sync(a: KObject, lookup: ServiceLookup): Promise<void> {
    const api = remoteApiOf(a);
    let cond: { status: 'True' | 'False'; reason: string; message: string };
    if (!api) cond = { status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
    else {
      const target = await resolveTarget(api.service, lookup);
      if (unresolved(target)) cond = { status: 'False', reason: target.reason, message: target.message };
      else {
        const url = `https://${target.host}:${target.port}/apis/${api.group}/${api.version}`;
        try {
          const r = await this.o.check(api, target);
          if (r.status >= 200 && r.status < 300) {
            const resources = r.body as Record<string, unknown>;
            this.o.remote.setState(api.name, { available: true, resources, openapi: await this.openApi(api, target, resources) });
            cond = { status: 'True', reason: 'Passed', message: 'all checks passed' };
          } else cond = { status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${url}: bad status from ${url}: ${r.status}` };
        } catch (err) {
          cond = { status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${url}: ${(err as Error).message}` };
        }
      }
      if (cond.status === 'False') this.o.remote.setState(api.name, { available: false });
    }
    const old = availableCondition(a);
    if (old && old.status === cond.status && old.reason === cond.reason && old.message === cond.message) return;
    const now = (this.o.now ?? (() => new Date()))().toISOString().replace(/\.\d+Z$/, 'Z');
    const lastTransitionTime = old && old.status === cond.status ? old.lastTransitionTime : now;
    await this.writeCondition(a.metadata.name!, { type: 'Available', ...cond, lastTransitionTime }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err; // deleted meanwhile
    });
  }

  /** The server's OpenAPI documents: the cached ones unless due (remote-openapi.ts openApiDue), else fetched again. */
  private async openApi(api: RemoteApi, target: { host: string; port: number; servername: string }, resources: Record<string, unknown>): Promise<RemoteOpenApi | undefined> {
    const prev = this.o.remote.lookup(api.group, api.version)?.state;
    const cached = prev?.available ? prev.openapi : undefined;
    if (!this.o.openApi || !openApiDue(cached, this.o.clock.now(), JSON.stringify(prev?.resources) !== JSON.stringify(resources))) return cached;
    return this.o.openApi(api, target);
  }

  private async writeCondition(name: string, condition: Record<string, unknown>): Promise<void> {
    await this.store.update(
      this.o.apiServices,
      '',
      name,
      (cur) => {
        if (!cur) throw errors.notFound('apiservices', name, 'apiregistration.svc.io');
        const others = ((cur.status as { conditions?: Array<{ type?: string }> } | undefined)?.conditions ?? []).filter((c) => c.type !== 'Available');
        return { ...cur, status: { ...(cur.status as object), conditions: [...others, condition] } };
      },
      ctx,
    );
  }
}
