/** Seccomp profile JSON validation (spec Appendix D): the shipped profiles pass, mistakes are named. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { parseSeccompProfile, SECCOMP_ACTIONS, seccompProfileProblems } from '../../../../agent/seccomp/profile-validation';

const repo = path.join(__dirname, '..', '..', '..', '..', '..');

test('the profiles shipped in seccomp/ are valid', async (t) => {
  for (const f of ['audit.json', 'example-deny-dangerous.json']) {
    const r = parseSeccompProfile(await readFile(path.join(repo, 'seccomp', f), 'utf8'));
    t.true('profile' in r, `${f}: ${JSON.stringify(r)}`);
  }
});

test('every action of the spec is accepted as default and per-rule action', (t) => {
  t.deepEqual([...SECCOMP_ACTIONS], ['SCMP_ACT_ERRNO', 'SCMP_ACT_ALLOW', 'SCMP_ACT_KILL_PROCESS', 'SCMP_ACT_KILL_THREAD', 'SCMP_ACT_KILL', 'SCMP_ACT_TRAP', 'SCMP_ACT_NOTIFY', 'SCMP_ACT_TRACE', 'SCMP_ACT_LOG']);
  for (const a of SECCOMP_ACTIONS) {
    t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['read'], action: a }] }), [], a);
    if (a !== 'SCMP_ACT_NOTIFY') t.deepEqual(seccompProfileProblems({ defaultAction: a }), [], a);
  }
  t.deepEqual(
    seccompProfileProblems({
      defaultAction: 'SCMP_ACT_ERRNO',
      defaultErrnoRet: 1,
      architectures: ['SCMP_ARCH_X86_64'],
      syscalls: [{ names: ['socket'], action: 'SCMP_ACT_ERRNO', errnoRet: 13, args: [{ index: 0, value: 17, op: 'SCMP_CMP_EQ' }], comment: 'no raw sockets' }],
    }),
    [],
  );
});

test('mistakes are reported with the field that is wrong', (t) => {
  t.deepEqual(seccompProfileProblems({}), ['defaultAction: required']);
  t.deepEqual(seccompProfileProblems([]), ['the profile must be a JSON object']);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'ALLOW' }), [
    'defaultAction: unsupported action "ALLOW": must be one of SCMP_ACT_ERRNO, SCMP_ACT_ALLOW, SCMP_ACT_KILL_PROCESS, SCMP_ACT_KILL_THREAD, SCMP_ACT_KILL, SCMP_ACT_TRAP, SCMP_ACT_NOTIFY, SCMP_ACT_TRACE, SCMP_ACT_LOG',
  ]);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_NOTIFY' }), ['defaultAction: SCMP_ACT_NOTIFY cannot be the default action']);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_ALLOW', defaultErrnoRet: 1 }), ['defaultErrnoRet: only allowed when defaultAction is SCMP_ACT_ERRNO or SCMP_ACT_TRACE']);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_ERRNO', defaultErrnoRet: -1 }), ['defaultErrnoRet: must be a non-negative integer']);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_ALLOW', syscall: [] }), ['unknown field "syscall"']);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: {} }), ['syscalls: must be a list']);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: [], action: 'SCMP_ACT_LOG' }] }), ['syscalls[0].names: must be a non-empty list of system call names']);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['Read Me'], action: 'SCMP_ACT_LOG', extra: 1 }] }), [
    'syscalls[0]: unknown field "extra"',
    'syscalls[0].names[0]: "Read Me" is not a system call name',
  ]);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['read'], action: 'SCMP_ACT_ALLOW', errnoRet: 1 }] }), ['syscalls[0].errnoRet: only allowed with SCMP_ACT_ERRNO or SCMP_ACT_TRACE']);
  t.deepEqual(seccompProfileProblems({ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['read'], action: 'SCMP_ACT_ERRNO', args: [{ index: 6, value: -1, op: 'EQ' }] }] }), [
    'syscalls[0].args[0].index: must be an integer from 0 to 5',
    'syscalls[0].args[0].value: must be a non-negative integer',
    'syscalls[0].args[0].op: must be one of SCMP_CMP_NE, SCMP_CMP_LT, SCMP_CMP_LE, SCMP_CMP_EQ, SCMP_CMP_GE, SCMP_CMP_GT, SCMP_CMP_MASKED_EQ',
  ]);
  const bad = parseSeccompProfile('{ "defaultAction": ');
  t.true('problems' in bad && /^not valid JSON/.test(bad.problems[0]));
});
