/**
 * Validation of seccomp profile JSON (spec Appendix D): defaultAction, defaultErrnoRet, and
 * syscalls[] with names, action and args, actions from the SCMP_ACT_* list. Fields Docker and
 * containerd profiles carry besides these (architectures, flags, comments, includes ...) are
 * accepted and left to the runtime; anything else is reported, so a typo ("syscall", "defaultAction "
 * ...) fails container creation with a message instead of silently meaning something else.
 */

export const SECCOMP_ACTIONS = [
  'SCMP_ACT_ERRNO',
  'SCMP_ACT_ALLOW',
  'SCMP_ACT_KILL_PROCESS',
  'SCMP_ACT_KILL_THREAD',
  'SCMP_ACT_KILL',
  'SCMP_ACT_TRAP',
  'SCMP_ACT_NOTIFY',
  'SCMP_ACT_TRACE',
  'SCMP_ACT_LOG',
] as const;

export type SeccompAction = (typeof SECCOMP_ACTIONS)[number];

/** Comparison operators of syscall argument rules (runc / libseccomp names). */
export const SECCOMP_OPS = ['SCMP_CMP_NE', 'SCMP_CMP_LT', 'SCMP_CMP_LE', 'SCMP_CMP_EQ', 'SCMP_CMP_GE', 'SCMP_CMP_GT', 'SCMP_CMP_MASKED_EQ'] as const;

export interface SeccompArg {
  index: number;
  value: number;
  valueTwo?: number;
  op: (typeof SECCOMP_OPS)[number];
}

export interface SeccompSyscallRule {
  names: string[];
  action: SeccompAction;
  args?: SeccompArg[];
  errnoRet?: number;
}

export interface SeccompProfileJson {
  defaultAction: SeccompAction;
  defaultErrnoRet?: number;
  syscalls?: SeccompSyscallRule[];
}

const TOP_LEVEL = new Set(['defaultAction', 'defaultErrnoRet', 'syscalls', 'architectures', 'archMap', 'flags', 'listenerPath', 'listenerMetadata']);
const RULE_FIELDS = new Set(['names', 'action', 'args', 'errnoRet', 'comment', 'includes', 'excludes']);
const ARG_FIELDS = new Set(['index', 'value', 'valueTwo', 'op']);
/** Actions that return an errno (or hand one to a tracer), so an errno value means something. */
const ERRNO_ACTIONS = new Set<string>(['SCMP_ACT_ERRNO', 'SCMP_ACT_TRACE']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isUint(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

function actionProblem(where: string, v: unknown): string | undefined {
  if (typeof v !== 'string') return `${where}: must be a string, one of ${SECCOMP_ACTIONS.join(', ')}`;
  if (!(SECCOMP_ACTIONS as readonly string[]).includes(v)) return `${where}: unsupported action ${JSON.stringify(v)}: must be one of ${SECCOMP_ACTIONS.join(', ')}`;
  return undefined;
}

function argProblems(where: string, a: unknown): string[] {
  if (!isRecord(a)) return [`${where}: must be an object`];
  const out: string[] = [];
  for (const k of Object.keys(a)) if (!ARG_FIELDS.has(k)) out.push(`${where}: unknown field ${JSON.stringify(k)}`);
  if (!isUint(a['index']) || (a['index']) > 5) out.push(`${where}.index: must be an integer from 0 to 5`);
  if (!isUint(a['value'])) out.push(`${where}.value: must be a non-negative integer`);
  if (a['valueTwo'] !== undefined && !isUint(a['valueTwo'])) out.push(`${where}.valueTwo: must be a non-negative integer`);
  if (typeof a['op'] !== 'string' || !(SECCOMP_OPS as readonly string[]).includes(a['op'])) {
    out.push(`${where}.op: must be one of ${SECCOMP_OPS.join(', ')}`);
  }
  return out;
}

function ruleProblems(where: string, r: unknown): string[] {
  if (!isRecord(r)) return [`${where}: must be an object`];
  const out: string[] = [];
  for (const k of Object.keys(r)) if (!RULE_FIELDS.has(k)) out.push(`${where}: unknown field ${JSON.stringify(k)}`);
  const names = r['names'];
  if (!Array.isArray(names) || names.length === 0) out.push(`${where}.names: must be a non-empty list of system call names`);
  else names.forEach((n, i) => typeof n === 'string' && /^[a-z0-9_]+$/.test(n) ? undefined : out.push(`${where}.names[${i}]: ${JSON.stringify(n)} is not a system call name`));
  const ap = actionProblem(`${where}.action`, r['action']);
  if (ap) out.push(ap);
  if (r['errnoRet'] !== undefined) {
    if (!isUint(r['errnoRet'])) out.push(`${where}.errnoRet: must be a non-negative integer`);
    else if (!ERRNO_ACTIONS.has(String(r['action']))) out.push(`${where}.errnoRet: only allowed with SCMP_ACT_ERRNO or SCMP_ACT_TRACE`);
  }
  if (r['args'] !== undefined && r['args'] !== null) {
    if (!Array.isArray(r['args'])) out.push(`${where}.args: must be a list`);
    else if (r['args'].length > 6) out.push(`${where}.args: at most 6 argument rules (system calls have 6 arguments)`);
    else r['args'].forEach((a, i) => out.push(...argProblems(`${where}.args[${i}]`, a)));
  }
  return out;
}

/** Problems with a parsed profile, each naming the field; [] when valid. Never throws. */
export function seccompProfileProblems(profile: unknown): string[] {
  if (!isRecord(profile)) return ['the profile must be a JSON object'];
  const out: string[] = [];
  for (const k of Object.keys(profile)) if (!TOP_LEVEL.has(k)) out.push(`unknown field ${JSON.stringify(k)}`);
  if (profile['defaultAction'] === undefined) out.push('defaultAction: required');
  else {
    const ap = actionProblem('defaultAction', profile['defaultAction']);
    if (ap) out.push(ap);
    // runc refuses it: a notification needs a syscall to wait on, not every syscall.
    else if (profile['defaultAction'] === 'SCMP_ACT_NOTIFY') out.push('defaultAction: SCMP_ACT_NOTIFY cannot be the default action');
  }
  if (profile['defaultErrnoRet'] !== undefined) {
    if (!isUint(profile['defaultErrnoRet'])) out.push('defaultErrnoRet: must be a non-negative integer');
    else if (!ERRNO_ACTIONS.has(String(profile['defaultAction']))) out.push('defaultErrnoRet: only allowed when defaultAction is SCMP_ACT_ERRNO or SCMP_ACT_TRACE');
  }
  const syscalls = profile['syscalls'];
  if (syscalls !== undefined && syscalls !== null) {
    if (!Array.isArray(syscalls)) out.push('syscalls: must be a list');
    else syscalls.forEach((r, i) => out.push(...ruleProblems(`syscalls[${i}]`, r)));
  }
  return out;
}

/** Parses and validates profile text; returns the profile or the problems (a JSON syntax error is one). */
export function parseSeccompProfile(text: string): { profile: SeccompProfileJson } | { problems: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { problems: [`not valid JSON: ${(e as Error).message}`] };
  }
  const problems = seccompProfileProblems(parsed);
  return problems.length > 0 ? { problems } : { profile: parsed as SeccompProfileJson };
}
