/**
 * A program run under a pseudo-terminal (python's pty module, /usr/bin/python3): what `kubectl
 * exec -it` or `run -it` needs to see a terminal. `input` is typed once the program has turned the
 * terminal's echo off (kubectl makes it raw before it connects; typed earlier, the local line
 * discipline would echo it and could drop it). Resolves the exit code and everything the program
 * wrote to the terminal; bounded by timeoutMs.
 */
import { run, type Run } from './real-clients';

const SCRIPT = [
  'import os, pty, sys, termios, time, select',
  'pid, fd = pty.fork()',
  'if pid == 0:',
  '    os.execv(sys.argv[2], sys.argv[2:])',
  'out = bytearray()',
  'deadline = time.time() + 30',
  'while termios.tcgetattr(fd)[3] & termios.ECHO and time.time() < deadline:',
  '    time.sleep(0.05)',
  'os.write(fd, sys.argv[1].encode())',
  'while True:',
  '    r, _, _ = select.select([fd], [], [], 30)',
  '    if not r:',
  '        break',
  '    try:',
  '        data = os.read(fd, 1024)',
  '    except OSError:',
  '        break',
  '    if not data:',
  '        break',
  '    out.extend(data)',
  '_, status = os.waitpid(pid, 0)',
  'sys.stdout.write(out.decode(errors="replace"))',
  'sys.exit(os.waitstatus_to_exitcode(status))',
].join('\n');

export function runUnderPty(file: string, args: readonly string[], input: string, timeoutMs = 60_000): Promise<Run> {
  return run('/usr/bin/python3', ['-c', SCRIPT, input, file, ...args], { timeoutMs, input: '' });
}
