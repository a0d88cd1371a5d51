/** Container logs: the /containerLogs handler (for the agent's HTTPS server) and the minimal secured server that hosts it for now. */
export { containerLogHandler, parseContainerLogPath, CONTAINER_LOGS_PREFIX, type LogLocator, type LogLocation } from './container-log-handler';
export { LogServer, DEFAULT_LOG_READERS, MASTERS_GROUP, type LogServerOptions } from './log-server';
export { ensureServingCert, type ServingCert } from './serving-cert';
export { readContainerLogs } from './read-logs';
export { parseLogOptions, type LogOptions } from './log-options';
