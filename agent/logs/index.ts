/** Container logs: the /containerLogs handler the agent's HTTPS server (agent/server) mounts. */
export { containerLogHandler, parseContainerLogPath, CONTAINER_LOGS_PREFIX, LogLocateError, type LogLocator, type LogLocation } from './container-log-handler';
export { readContainerLogs } from './read-logs';
export { parseLogOptions, type LogOptions } from './log-options';
export { ContainerLogManager, type ContainerLogManagerOptions } from './container-log-manager';
