/**
 * The agent's view of CRI runtime.v1 objects: camelCase, plain numbers and strings, only the
 * fields the agent reads or sets. Enum values keep upstream's names so logs and tests read the
 * same as crictl. The wire forms (snake_case, int64 as strings) stay inside agent/cri.
 *
 * Units: CRI sends timestamps in nanoseconds; here every `...At`/`timestamp` is milliseconds since
 * the epoch (sub-millisecond precision is dropped), 0 when unset. Byte counts and CPU
 * nanoseconds are numbers (exact up to 2^53).
 *
 * One file per RPC family; this module gathers them, so importers need not know the split.
 */
export * from './container-types';
export * from './runtime-types';
export * from './stats-types';
export * from './image-types';
