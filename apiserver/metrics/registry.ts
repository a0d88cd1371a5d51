import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isHidden, stabilityHelp, type MetricDeclaration } from './stability';

/** Latency buckets upstream uses for apiserver_request_duration_seconds and etcd_request_duration_seconds (seconds). */
export const LATENCY_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

/** What the watch cache gauges read at each scrape (WatchCache.stats satisfies it). */
export interface WatchCacheStats {
  historyBytes: number;
  historyEvents: number;
  /** Open watches per "group/resource" (group '' for core). */
  watchers: ReadonlyMap<string, number>;
}

export interface ApiMetricsOptions {
  /** Also export process_* and nodejs_* metrics (memory, CPU, event-loop lag, GC), as upstream exports process_*. Default false. */
  processMetrics?: boolean;
  /** --show-hidden-metrics-for-version was given (validly): hidden deprecated metrics are registered too. */
  showHiddenMetrics?: boolean;
  /** Where the warning about a registered deprecated metric goes (upstream logs one). */
  warn?: (message: string) => void;
}

/**
 * The API server's metrics, in its own prom-client Registry (never the library's global one, so two
 * servers in one process, or tests, never share counters). Names and labels follow upstream
 * kube-apiserver, so existing dashboards and alerts apply:
 * - apiserver_request_total{verb, resource, code}: every request, WATCH included.
 * - apiserver_request_duration_seconds{verb, resource}: request latency; WATCH and CONNECT excluded,
 *   as upstream does, since their duration is a lifetime, not a latency.
 * - etcd_request_duration_seconds{operation, type}: latency of each store call (whichever backend),
 *   recorded by InstrumentedStorage; etcd_request_errors_total{operation, type} counts failed ones.
 * - apiserver_registered_watchers{group, resource}: watches open on the watch cache (API clients'
 *   and the in-process informers'); apiserver_terminated_watchers_total{group, resource}: watchers
 *   ended because they fell behind (upstream: closed for unresponsiveness).
 * - apiserver_cache_list_total{resource_prefix, index}: list pages answered from the watch cache's
 *   snapshots (ListFromCacheSnapshot); index is always empty (svc's cache has no indexes).
 * - apiserver_watch_cache_history_bytes / _events (svc's own): what the watch cache's history holds,
 *   bounded by --watch-cache-max-bytes.
 * - apiserver_events_dropped_total{component, reason} (svc's own): events of the in-process loops
 *   not written (QueueFull, Spam, Rejected, RetriesExhausted); upstream's recorders only log them.
 * - apiserver_validation_declarative_validation_mismatch_total / _panic_total (upstream's; the
 *   spec's declarative_validation_mismatch_total with upstream's namespace and subsystem): the
 *   DeclarativeValidation comparison's differences and its failures (store/declarative-validation.ts).
 * Each declares upstream's stability level (metrics/stability.ts: `[STABLE]`/`[ALPHA]` in HELP;
 * svc's own are ALPHA); a deprecated one past its lifetime is hidden unless --show-hidden-metrics-for-version.
 */
export class ApiMetrics {
  /** The registry; GET /metrics renders it with metricsText(). */
  readonly registry = new Registry();
  private readonly requests: Counter<'verb' | 'resource' | 'code'>;
  private readonly requestLatency: Histogram<'verb' | 'resource'>;
  private readonly storeLatency: Histogram<'operation' | 'type'>;
  private readonly storeErrors: Counter<'operation' | 'type'>;
  private readonly sources: Array<() => string> = [];
  private readonly terminatedWatchers: Counter<'group' | 'resource'>;
  private readonly droppedEvents: Counter<'component' | 'reason'>;
  private readonly validationMismatches: Counter;
  private readonly validationPanics: Counter;
  private readonly cacheLists: Counter<'resource_prefix' | 'index'>;

  constructor(private readonly o: ApiMetricsOptions = {}) {
    this.requests = new Counter({
      ...this.declare('apiserver_request_total', { stability: 'STABLE' }, 'Counter of apiserver requests broken out for each verb, resource, and HTTP response code.'),
      labelNames: ['verb', 'resource', 'code'],
    });
    this.requestLatency = new Histogram({
      ...this.declare('apiserver_request_duration_seconds', { stability: 'STABLE' }, 'Response latency distribution in seconds for each verb and resource (WATCH and CONNECT excluded).'),
      labelNames: ['verb', 'resource'],
      buckets: LATENCY_BUCKETS,
    });
    this.storeLatency = new Histogram({
      ...this.declare('etcd_request_duration_seconds', { stability: 'ALPHA' }, 'Store request latency in seconds for each operation and object type.'),
      labelNames: ['operation', 'type'],
      buckets: LATENCY_BUCKETS,
    });
    this.storeErrors = new Counter({
      ...this.declare('etcd_request_errors_total', { stability: 'ALPHA' }, 'Store requests that failed, for each operation and object type.'),
      labelNames: ['operation', 'type'],
    });
    this.terminatedWatchers = new Counter({
      ...this.declare('apiserver_terminated_watchers_total', { stability: 'ALPHA' }, 'Counter of watchers closed due to unresponsiveness (they fell behind the watch cache history).'),
      labelNames: ['group', 'resource'],
    });
    this.droppedEvents = new Counter({
      ...this.declare('apiserver_events_dropped_total', { stability: 'ALPHA' }, 'Events of the in-process control loops and scheduler that were not written, by reporting component and reason.'),
      labelNames: ['component', 'reason'],
    });
    this.validationMismatches = new Counter(
      this.declare('apiserver_validation_declarative_validation_mismatch_total', { stability: 'BETA' }, 'Number of times declarative validation results differed from handwritten validation results for core types.'),
    );
    this.cacheLists = new Counter({
      ...this.declare('apiserver_cache_list_total', { stability: 'ALPHA' }, 'Number of LIST requests served from watch cache (ListFromCacheSnapshot: pages at an exact older revision).'),
      labelNames: ['resource_prefix', 'index'],
    });
    this.validationPanics = new Counter(this.declare('apiserver_validation_declarative_validation_panic_total', { stability: 'BETA' }, 'Number of times declarative validation has panicked during validation.'));
    if (o.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * A metric's name, HELP (with its stability level) and registry: none when it is hidden (a
   * deprecated metric past its lifetime, without --show-hidden-metrics-for-version), so it is
   * still usable but never exported.
   */
  declare(name: string, d: MetricDeclaration, help: string): { name: string; help: string; registers: Registry[] } {
    const hidden = isHidden(d) && !this.o.showHiddenMetrics;
    if (d.deprecatedVersion && !hidden) this.o.warn?.(`${name} is deprecated since ${d.deprecatedVersion}`);
    return { name, help: stabilityHelp(d, help), registers: hidden ? [] : [this.registry] };
  }

  /** Exposes the watch cache's gauges, read from stats() at each scrape. */
  watchCache(stats: () => WatchCacheStats): void {
    new Gauge({
      ...this.declare('apiserver_registered_watchers', { stability: 'ALPHA' }, 'Number of currently registered watchers for a given resource.'),
      labelNames: ['group', 'resource'],
      collect() {
        this.reset();
        for (const [key, n] of stats().watchers) {
          const slash = key.indexOf('/');
          this.set({ group: key.slice(0, slash), resource: key.slice(slash + 1) }, n);
        }
      },
    });
    new Gauge({
      ...this.declare('apiserver_watch_cache_history_bytes', { stability: 'ALPHA' }, 'Bytes of events the watch cache holds in memory (the stored encodings of objects and previous objects, and their renderings).'),
      collect() {
        this.set(stats().historyBytes);
      },
    });
    new Gauge({
      ...this.declare('apiserver_watch_cache_history_events', { stability: 'ALPHA' }, 'Events the watch cache holds in memory.'),
      collect() {
        this.set(stats().historyEvents);
      },
    });
  }

  /** The audit pipeline's counters, upstream's names (created on first use, so servers without auditing export none). */
  audit(): { event(level: string): void; error(plugin: string, count: number): void } {
    const events = new Counter(this.declare('apiserver_audit_event_total', { stability: 'ALPHA' }, 'Counter of audit events generated and sent to the audit backend.'));
    const levels = new Counter({ ...this.declare('apiserver_audit_level_total', { stability: 'ALPHA' }, 'Counter of policy levels for audit events (1 per request).'), labelNames: ['level'] });
    const errors = new Counter({ ...this.declare('apiserver_audit_error_total', { stability: 'ALPHA' }, 'Counter of audit events that failed to be audited properly.'), labelNames: ['plugin'] });
    return {
      event(level) {
        events.inc();
        levels.inc({ level });
      },
      error(plugin, count) {
        errors.inc({ plugin }, count);
      },
    };
  }

  private deprecatedApis?: Gauge<'group' | 'version' | 'resource' | 'subresource' | 'removed_release'>;

  /** apiserver_requested_deprecated_apis (upstream's, spec 6.2): 1 for each deprecated API requested since start. */
  deprecatedApiRequested(group: string, version: string, resource: string, subresource: string, removedRelease: string): void {
    this.deprecatedApis ??= new Gauge({
      ...this.declare('apiserver_requested_deprecated_apis', { stability: 'STABLE' }, 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.'),
      labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'],
    });
    this.deprecatedApis.set({ group, version, resource, subresource, removed_release: removedRelease }, 1);
  }

  /** Counts one event of an in-process component that was not written. */
  eventDropped(component: string, reason: string): void {
    this.droppedEvents.inc({ component, reason });
  }

  /** Counts one difference between declarative and hand-written validation. */
  declarativeValidationMismatch(): void {
    this.validationMismatches.inc();
  }

  /** Counts one failure (upstream: a panic) of declarative validation. */
  declarativeValidationPanic(): void {
    this.validationPanics.inc();
  }

  /** Counts one store list page answered from the watch cache's snapshots (no index: svc's cache has none). */
  cacheListServed(resourcePrefix: string): void {
    this.cacheLists.inc({ resource_prefix: resourcePrefix, index: '' });
  }

  /** Counts one watcher ended for falling behind. */
  watcherTerminated(group: string, resource: string): void {
    this.terminatedWatchers.inc({ group, resource });
  }

  /**
   * Records one finished request. verb is RequestInfo's (get, list, watch, create, update, patch,
   * delete, deletecollection, or the lower-case HTTP method of a non-resource request); it is
   * reported in upstream's form (GET, LIST, WATCH, POST, PUT, PATCH, DELETE, DELETECOLLECTION).
   * resource is '' for non-resource paths (upstream also leaves it empty there).
   */
  recordRequest(verb: string, resource: string, code: number, seconds: number): void {
    const v = reportedVerb(verb);
    this.requests.inc({ verb: v, resource, code: String(code) });
    if (v !== 'WATCH' && v !== 'CONNECT') this.requestLatency.observe({ verb: v, resource }, seconds);
  }

  /** Records one store call: operation (get, list, create, update, delete, compact, ...) on a type ("pods", "leases.coordination.svc.io"). */
  recordStore(operation: string, type: string, seconds: number, failed: boolean): void {
    this.storeLatency.observe({ operation, type }, seconds);
    if (failed) this.storeErrors.inc({ operation, type });
  }

  /** Appends another registry's text exposition (e.g. the authenticators' MetricsRegistry.render) to metricsText(). */
  include(render: () => string): void {
    this.sources.push(render);
  }

  /** The Prometheus text exposition of every metric, this registry's then the included ones (serve with contentType). */
  async metricsText(): Promise<string> {
    return (await this.registry.metrics()) + this.sources.map((render) => render()).join('');
  }

  /** The Content-Type of metricsText(): text/plain; version=0.0.4; charset=utf-8. */
  get contentType(): string {
    return this.registry.contentType;
  }
}

const VERBS: Record<string, string> = {
  get: 'GET',
  list: 'LIST',
  watch: 'WATCH',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETECOLLECTION',
  connect: 'CONNECT',
};

/** Upstream's reported verb: API verbs mapped to their request method form, others upper-cased. */
export function reportedVerb(verb: string): string {
  return VERBS[verb] ?? verb.toUpperCase();
}
