import test from 'ava';
import { execOptionsFromQuery } from '../../../../common/stream/exec-streams';
import { queryPorts } from '../../../../agent/server/stream-handler';

// The API server translates PodExecOptions to the kubelet's parameter names (upstream's
// ExecStdinParam "input", ExecStdoutParam "output", ExecStderrParam "error", PortHeader "port"):
// the agent must read those; its earlier spellings stay accepted.

test("exec options read the kubelet's input/output/error names", (t) => {
  t.deepEqual(execOptionsFromQuery(new URLSearchParams('command=ls&input=1&output=1&error=1')), { command: ['ls'], stdin: true, stdout: true, stderr: true, tty: false });
  t.deepEqual(execOptionsFromQuery(new URLSearchParams('command=sh&input=1&output=1&error=1&tty=1')), { command: ['sh'], stdin: true, stdout: true, stderr: false, tty: true });
  t.deepEqual(execOptionsFromQuery(new URLSearchParams('command=ls&stdout=true')), { command: ['ls'], stdin: false, stdout: true, stderr: false, tty: false });
  t.deepEqual(execOptionsFromQuery(new URLSearchParams('command=ls&output=0')), { command: ['ls'], stdin: false, stdout: false, stderr: false, tty: false });
});

test("port-forward ports come from the kubelet's port parameter, or ports", (t) => {
  t.deepEqual(queryPorts(new URLSearchParams('port=80&port=8080')), ['80', '8080']);
  t.deepEqual(queryPorts(new URLSearchParams('ports=80,8080')), ['80', '8080']);
  t.deepEqual(queryPorts(new URLSearchParams('')), []);
});
