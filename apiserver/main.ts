import { parseShowHiddenMetrics } from './metrics/stability';
import { setMaxListeners } from 'node:events';
import pino from 'pino';
import { terminalColumns } from '../common/flag-usage';
import { createSdNotifier } from '../common/systemd';
import { svcBuildDate, svcVersion } from '../common/version';
import { AuthenticationConfigError } from './authn/authentication-config';
import { AuthorizationConfigError } from './authz/config-error';
import { loadCbor } from './codec/cbor-lib';
import { AdmissionConfigError } from './config/admission-config';
import type { Auditor } from './filters/audit/auditor';
import { AuditPolicyError } from './filters/audit/policy';
import { WebhookConfigError } from './authn/webhook-client-config';
import { buildAuditor } from './wiring/audit';
import { CBOR_GATE, FlagError, helpText, parseFlags, type ApiServerFlags } from './config/flags';
import { ApiMetrics } from './metrics/registry';
import { buildAuthn, type AuthnLayer } from './wiring/authn';
import { runControlLoops } from './wiring/control-loops';
import { buildApiServer } from './wiring/http';
import { buildResourceMetrics } from './wiring/resource-metrics';
import { applyRuntimeConfig, openStorage } from './wiring/storage';
import { buildStore, type StoreLayer } from './wiring/store';
import { loadServingTls, type ServingTls } from './wiring/tls';

const gitVersion = svcVersion();
const [major = '0', minor = '0'] = gitVersion.replace(/^v/, '').split('.');
const VERSION = { gitVersion, major, minor, buildDate: svcBuildDate() };

/**
 * Composition root: flags → storage → store, admission and authorization → TLS → authentication
 * → HTTP server and control loops (each phase in wiring/); runs until SIGTERM or SIGINT.
 */
export async function main(argv: readonly string[]): Promise<number> {
  // The store migration sub-commands (svc-apiserver export|import|verify) run instead of the
  // server; loaded only when used.
  if (argv[0] === 'export' || argv[0] === 'import' || argv[0] === 'verify') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: the migration tools load only for their sub-commands
    const tools = require('./tools/cli') as typeof import('./tools/cli');
    return tools.runTool(argv[0], argv.slice(1), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, now: () => new Date() });
  }
  const flags = parseCommandLine(argv);
  if (typeof flags === 'number') return flags;
  const log = pino({ level: flags.logLevel, base: { component: 'svc-apiserver' } });
  const apiMetrics = new ApiMetrics({ processMetrics: true, showHiddenMetrics: flags.showHiddenMetricsForVersion !== '', warn: (m) => log.warn(m) });
  for (const w of flags.featureGateWarnings) log.warn(w);
  const storage = await openStorage(flags, apiMetrics, log);
  let core: StoreLayer, tls: ServingTls, authn: AuthnLayer, audit: Auditor | undefined;
  try {
    core = buildStore(flags, storage, log, apiMetrics);
    tls = await loadServingTls(flags);
    authn = buildAuthn(flags, storage, core, tls, apiMetrics, log);
    audit = buildAuditor(flags, apiMetrics, log, storage.registry);
    applyRuntimeConfig(storage.registry, flags.runtimeConfig);
  } catch (err) {
    if (err instanceof AuthorizationConfigError || err instanceof AuthenticationConfigError || err instanceof AdmissionConfigError || err instanceof FlagError || err instanceof AuditPolicyError || err instanceof WebhookConfigError) {
      process.stderr.write(`svc-apiserver: ${err.message}\n`);
      await storage.storage.close();
      return 2;
    }
    throw err;
  }

  const signal = shutdownSignal(log);
  const cacheRun = storage.cache.run(signal);
  // Informers follow for the life of the process; a loop that loses leadership only drops its handlers.
  core.informers.start(signal);
  // The CBOR library is an ES module, imported once before serving so that the codec is synchronous.
  if (flags.featureGates.has(CBOR_GATE)) await loadCbor();
  const metricsApi = buildResourceMetrics(flags, storage, core, tls, log);
  const server = buildApiServer(flags, { storage, core, tls, authn, audit, metrics: apiMetrics, log, version: VERSION, metricsApi });
  // Serving starts at once (readyz says not ready until the store answers); the system
  // namespaces and the control loops follow as soon as the store is reachable.
  const loops = [
    // The loops' events are written for the life of the process (queued ones outlive a lost leadership).
    core.events.run(signal),
    runControlLoops(flags, storage, core, tls, log, signal, metricsApi.usage),
    // The bundled metrics server scrapes on every replica: each serves metrics.k8s.io from its own cache.
    metricsApi.run(signal),
    // RBAC and Node informers, default-policy reconcile (retries until the system namespaces exist), config reloads.
    core.authz.run(signal),
    // Service account and bootstrap token lookup caches (live reads answer until they have listed), authn config reloads.
    authn.auth.run(signal),
  ];
  // Type=notify: READY=1 once the listener is bound, STOPPING=1 when shutdown begins.
  const notifier = createSdNotifier({ log });
  signal.addEventListener('abort', () => notifier.stopping(), { once: true });
  await server.run(signal, () => {
    if (!flags.tlsCertFile) log.info({ kubeconfig: tls.pki.adminKubeconfig }, 'admin kubeconfig written');
    notifier.status(`serving on ${flags.bindAddress}:${flags.securePort}`);
    notifier.ready();
  });
  await Promise.allSettled([cacheRun, ...loops, core.informers.stopped()]);
  await core.authz.close();
  await storage.storage.close();
  return 0;
}

/** The flags, or the exit code when the command line asks for help or the version, or is wrong (2). */
function parseCommandLine(argv: readonly string[]): ApiServerFlags | number {
  let flags: ApiServerFlags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`svc-apiserver: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (flags.help) {
    process.stdout.write(helpText(terminalColumns()));
    return 0;
  }
  if (flags.version) {
    process.stdout.write(`svc-apiserver ${svcVersion()}\n`);
    return 0;
  }
  // Checked here, where the metrics' release is known (config/ sits beside metrics/, not above it).
  const hidden = parseShowHiddenMetrics(flags.showHiddenMetricsForVersion);
  if ('error' in hidden) {
    process.stderr.write(`svc-apiserver: ${hidden.error}\n`);
    return 2;
  }
  return flags;
}

/** The signal every control loop and watch listens on: aborted on SIGTERM or SIGINT. */
function shutdownSignal(log: pino.Logger): AbortSignal {
  const ac = new AbortController();
  // Every control loop and watch listens on this one signal; the default of 10 listeners is too few.
  setMaxListeners(100, ac.signal);
  const stop = (sig: string) => {
    if (ac.signal.aborted) return;
    log.info({ signal: sig }, 'shutdown requested');
    ac.abort();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return ac.signal;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`svc-apiserver: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
