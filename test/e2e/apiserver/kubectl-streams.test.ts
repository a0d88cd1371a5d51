/**
 * kubectl exec and port-forward end to end (issue 21, item 4) through a real svc-apiserver and a
 * real svc-node on the CRI simulator (its exec runs the simulator's small command set; its
 * port-forward echoes): kubectl 1.32 (/usr/bin/kubectl, WebSocket) and 1.27 (SPDY only), exit
 * codes passed through, stdin, a pty (python's pty module), port-forward with data both ways, and
 * the Python client's stream() exec and @kubernetes/client-node's Exec. Every client runs as a
 * process (or call) with a bounded timeout; every wait is bounded.
 */
import test from 'ava';
import type * as K8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { startApiServer, type RunningApiServer } from '../../helpers/apiserver-process';
import { freePort } from '../../helpers/free-port';
import { run, type Run } from '../../helpers/real-clients';
import { runUnderPty } from '../../helpers/pty';
import { runPod, startNode, type NodeUnderTest } from '../checkpoint/checkpoint-env';
import { eventually } from '../agent/agent-process';

const KUBECTL_132 = '/usr/bin/kubectl';
/** The older kubectl binaries sit next to /usr/bin/kubectl's target; 1.27 speaks SPDY only. */
const KUBECTL_127 = join(dirname(realpathSync(KUBECTL_132)), 'kubectl.1.27');
const PYTHON = '/usr/bin/python3';
const NODE = 'streams-node';
const POD = 'shell';

let s: RunningApiServer;
let node: NodeUnderTest;

test.before(async () => {
  s = await startApiServer();
  node = await startNode(s, join(mkdtempSync(join(tmpdir(), 'svc-streams-')), 'node'), NODE);
  await runPod(s, NODE, POD);
  // A user who may read pods (kubectl exec reads the pod first) but not exec into them.
  const bound = await run(KUBECTL_132, ['--kubeconfig', s.kubeconfig, 'create', 'rolebinding', 'viewer', '--clusterrole=view', '--user=viewer', '-n', 'default']);
  if (bound.code !== 0) throw new Error(bound.stderr);
  await eventually('the viewer binding in effect', async () => ((await kubectl(KUBECTL_132, ['auth', 'can-i', 'get', 'pods', '--as=viewer'])).stdout.trim() === 'yes' ? true : undefined), 20_000, 200);
  await runPod(s, NODE, 'interactive', undefined, { containers: [{ name: 'app', image: 'svc.local/busybox:latest', imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'], stdin: true }] });
});
test.after.always(async () => {
  await node?.agent.stop();
  await s?.stop();
});

const kubectl = (bin: string, args: string[], input?: string): Promise<Run> => run(bin, ['--kubeconfig', s.kubeconfig, ...args], { timeoutMs: 60_000, ...(input !== undefined ? { input } : {}) });

/** The agent's open streaming connections and runtime streams, from its /metrics through nodes/proxy. */
async function streams(): Promise<{ connections: number; runtime: number }> {
  const r = await kubectl(KUBECTL_132, ['get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics`]);
  if (r.code !== 0) throw new Error(r.stderr);
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(r.stdout)?.[1] ?? NaN);
  return { connections: value('svc_node_streaming_connections'), runtime: value('svc_node_runtime_streams') };
}

/** Whether the pod is gone (kubectl get answers NotFound). */
async function podGone(name: string): Promise<true | undefined> {
  const r = await kubectl(KUBECTL_132, ['get', 'pod', name, '-o', 'name']);
  return r.code !== 0 && /NotFound|not found/.test(r.stderr) ? true : undefined;
}

for (const [label, bin] of [
  ['1.32 (WebSocket)', KUBECTL_132],
  ['1.27 (SPDY)', KUBECTL_127],
] as const) {
  test.serial(`kubectl ${label}: exec prints the command's output`, async (t) => {
    const r = await kubectl(bin, ['exec', POD, '--', 'echo', 'hi']);
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, 'hi\n');
  });

  test.serial(`kubectl ${label}: exec as a user without pods/exec is forbidden by the API server`, async (t) => {
    const r = await kubectl(bin, ['--as=viewer', 'exec', POD, '--', 'echo', 'hi']);
    t.is(r.code, 1);
    t.regex(r.stderr, /forbidden: User "viewer" cannot (create|get) resource "pods\/exec" in API group "" in the namespace "default"/);
    t.is(r.stdout, '');
  });

  test.serial(`kubectl ${label}: exec passes the exit code through`, async (t) => {
    const r = await kubectl(bin, ['exec', POD, '--', 'sh', '-c', 'exit 3']);
    t.is(r.code, 3, r.stderr);
    const f = await kubectl(bin, ['exec', POD, '--', 'nosuchcommand']);
    t.not(f.code, 0);
  });

  test.serial(`kubectl ${label}: exec -i sends stdin`, async (t) => {
    const input = 'line one\nline two\n'.repeat(500);
    const r = await kubectl(bin, ['exec', '-i', POD, '--', 'cat'], input);
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, input);
  });

  test.serial(`kubectl ${label}: exec -it under a pseudo-terminal`, async (t) => {
    // -c app: the earlier debug test added an ephemeral container, and kubectl's "Defaulted container" notice would share the terminal.
    const r = await runUnderPty(bin, ['--kubeconfig', s.kubeconfig, 'exec', '-it', POD, '-c', 'app', '--', 'sh'], 'echo from-the-tty\rexit 4\r');
    // The echo command's own output line (the typed command line reads "echo from-the-tty").
    t.regex(r.stdout, /(^|\n)from-the-tty\r?\n/, r.stdout + r.stderr);
    t.is(r.code, 4, r.stdout + r.stderr);
  });

  test.serial(`kubectl ${label}: attach -i echoes stdin through the container's main process (the simulator's is cat-like)`, async (t) => {
    const r = await kubectl(bin, ['attach', '-i', 'interactive', '-c', 'app'], 'attached line\n');
    t.regex(r.stdout, /attached line/, r.stderr);
  });

  test.serial(`kubectl ${label}: run -it --rm under a pseudo-terminal ends 0 when the shell exits (^D) and deletes the pod`, async (t) => {
    const name = `run-it-${label.slice(2, 4)}`;
    // nodeName in the overrides: no scheduler runs in this test's cluster.
    const r = await runUnderPty(
      bin,
      ['--kubeconfig', s.kubeconfig, 'run', name, '-it', '--rm', '--restart=Never', '--image=svc.local/busybox:latest', '--image-pull-policy=IfNotPresent', `--overrides={"spec":{"nodeName":"${NODE}"}}`, '--', 'sh'],
      'echo from-run\r\x04',
      90_000,
    );
    t.regex(r.stdout, /(^|\n)from-run\r?\n/, r.stdout + r.stderr);
    t.is(r.code, 0, r.stdout + r.stderr);
    t.true(await eventually(`pod ${name} deleted`, () => podGone(name), 60_000, 300));
  });

  test.serial(`kubectl ${label}: run -i --rm: the pod (stdinOnce) completes when kubectl closes stdin; the shell's output, exit 0, pod deleted`, async (t) => {
    const name = `run-i-${label.slice(2, 4)}`;
    const r = await kubectl(bin, ['run', name, '-i', '--rm', '--restart=Never', '--image=svc.local/busybox:latest', '--image-pull-policy=IfNotPresent', `--overrides={"spec":{"nodeName":"${NODE}"}}`, '--', 'sh'], 'echo piped-in\nfalse\ntrue\n');
    t.is(r.code, 0, r.stdout + r.stderr);
    t.regex(r.stdout, /piped-in\n/, r.stderr);
    t.true(await eventually(`pod ${name} deleted`, () => podGone(name), 60_000, 300));
  });

  test.serial(`kubectl ${label}: debug -i attaches to a new ephemeral container`, async (t) => {
    const r = await kubectl(bin, ['debug', '-i', POD, '--image=svc.local/busybox:latest', '--image-pull-policy=IfNotPresent', '--', 'cat'], 'into the debugger\n');
    t.is(r.code, 0, r.stderr);
    t.regex(r.stdout, /into the debugger/);
  });

  test.serial(`kubectl ${label}: cp copies a file into the container and back (tar over exec)`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cp-'));
    const name = `notes-${label.slice(0, 4)}.txt`;
    const content = `copied by kubectl ${label}\n`.repeat(200);
    writeFileSync(join(dir, name), content);
    const into = await kubectl(bin, ['cp', join(dir, name), `${POD}:/tmp/${name}`]);
    t.is(into.code, 0, into.stderr);
    const back = await kubectl(bin, ['cp', `${POD}:/tmp/${name}`, join(dir, 'back.txt')]);
    t.is(back.code, 0, back.stderr);
    t.is(readFileSync(join(dir, 'back.txt'), 'utf8'), content);
    rmSync(dir, { recursive: true, force: true });
  });

  test.serial(`kubectl ${label}: a client killed mid-exec leaves no stream open on the agent`, async (t) => {
    // The earlier tests' streams end shortly after their kubectl did: start from none open.
    const idle = async () => {
      const n = await streams();
      return n.connections === 0 && n.runtime === 0 ? n : undefined;
    };
    t.deepEqual(await eventually('no stream open before', idle, 30_000, 200), { connections: 0, runtime: 0 });
    const p = spawn(bin, ['--kubeconfig', s.kubeconfig, 'exec', POD, '--', 'sleep', '600'], { stdio: 'ignore' });
    const killer = setTimeout(() => p.kill('SIGKILL'), 60_000);
    try {
      // Running: the connection is counted at the upgrade, the runtime stream once the client's streams are set up.
      const open = await eventually('the exec running on the agent', async () => {
        const n = await streams();
        return n.connections === 1 && n.runtime >= 1 ? n : undefined;
      }, 30_000, 200);
      t.is(open.connections, 1);
    } finally {
      p.kill('SIGKILL');
      clearTimeout(killer);
    }
    t.deepEqual(await eventually('the streams closed', idle, 30_000, 200), { connections: 0, runtime: 0 });
  });

  test.serial(`kubectl ${label}: port-forward carries data both ways`, async (t) => {
    const local = await freePort();
    const pf = spawn(bin, ['--kubeconfig', s.kubeconfig, 'port-forward', `pod/${POD}`, `${local}:8080`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    pf.stdout.on('data', (d: Buffer) => (out += d.toString()));
    pf.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const killer = setTimeout(() => pf.kill('SIGKILL'), 60_000);
    try {
      await new Promise<void>((resolve, reject) => {
        pf.stdout.on('data', () => out.includes('Forwarding from') && resolve());
        pf.once('exit', () => reject(new Error(`port-forward exited: ${out}`)));
      });
      const payload = Buffer.alloc(256 * 1024, 'abcdefghij');
      const echoed = await new Promise<Buffer>((resolve, reject) => {
        const c = connect(local, '127.0.0.1');
        const chunks: Buffer[] = [];
        let n = 0;
        c.on('data', (d: Buffer) => {
          chunks.push(d);
          n += d.length;
          if (n >= payload.length) {
            c.destroy();
            resolve(Buffer.concat(chunks));
          }
        });
        c.on('error', reject);
        c.on('close', () => resolve(Buffer.concat(chunks)));
        c.write(payload);
      });
      t.deepEqual(echoed, payload, out);
    } finally {
      clearTimeout(killer);
      pf.kill('SIGTERM');
    }
  });
}

test.serial("the Python client's stream() exec", async (t) => {
  const script = [
    'import os, json',
    'from kubernetes import client, config',
    'from kubernetes.stream import stream',
    'config.load_kube_config(os.environ["SVC_KUBECONFIG"])',
    'api = client.CoreV1Api()',
    `out = stream(api.connect_get_namespaced_pod_exec, "${POD}", "default", command=["echo", "from", "python"], stderr=True, stdin=False, stdout=True, tty=False)`,
    `resp = stream(api.connect_get_namespaced_pod_exec, "${POD}", "default", command=["sh", "-c", "exit 5"], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)`,
    // Debian's client may miss a close frame that arrived in the same read as the status (it
    // selects on the socket, not its TLS buffer): it sees the connection end, which the agent sends
    // right after its close frame. The timeout only bounds the wait.
    'resp.run_forever(timeout=30)',
    'print(json.dumps({"out": out, "code": resp.returncode}))',
  ].join('\n');
  const r = await run(PYTHON, ['-c', script], { env: { SVC_KUBECONFIG: s.kubeconfig }, timeoutMs: 120_000 });
  t.is(r.code, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim().split('\n').pop()!) as { out: string; code: number };
  t.is(got.out, 'from python\n');
  t.is(got.code, 5);
});

test.serial("the Python client's portforward() (WebSocket v4, ports in the query) carries data both ways", async (t) => {
  const script = [
    'import os, json',
    'from kubernetes import client, config',
    'from kubernetes.stream import portforward',
    'config.load_kube_config(os.environ["SVC_KUBECONFIG"])',
    'api = client.CoreV1Api()',
    `pf = portforward(api.connect_get_namespaced_pod_portforward, "${POD}", "default", ports="8080")`,
    'sock = pf.socket(8080)',
    'sock.setblocking(True)',
    'sock.settimeout(30)',
    'payload = b"ping through python " * 1000',
    'sock.sendall(payload)',
    'got = b""',
    'while len(got) < len(payload):',
    '    chunk = sock.recv(65536)',
    '    if not chunk:',
    '        break',
    '    got += chunk',
    'sock.close()',
    'print(json.dumps({"same": got == payload, "n": len(got), "error": pf.error(8080)}))',
  ].join('\n');
  const r = await run(PYTHON, ['-c', script], { env: { SVC_KUBECONFIG: s.kubeconfig }, timeoutMs: 60_000 });
  t.is(r.code, 0, r.stderr);
  t.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop()!), { same: true, n: 20_000, error: null });
});

test.serial("@kubernetes/client-node's Exec: output, stdin and the exit status", async (t) => {
  // The client is an ES module: loaded with import(), which the CommonJS tests keep as is.
  const k8s: typeof K8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(s.kubeconfig);
  const exec = new k8s.Exec(kc);
  const once = (command: string[], input?: string) =>
    new Promise<{ out: string; status: K8s.V1Status }>((resolve, reject) => {
      let out = '';
      const stdout = new Writable({ write: (chunk: Buffer, _e, cb) => ((out += chunk.toString()), cb()) });
      const stdin = input === undefined ? null : new PassThrough();
      exec.exec('default', POD, 'app', command, stdout, null, stdin, false, (status) => resolve({ out, status })).catch(reject);
      stdin?.end(input);
      setTimeout(() => reject(new Error('no status within 60 s')), 60_000).unref();
    });
  const ok = await once(['echo', 'from', 'javascript']);
  t.is(ok.status.status, 'Success');
  t.is(ok.out, 'from javascript\n');
  const cat = await once(['cat'], 'typed in\n');
  t.is(cat.out, 'typed in\n');
  const failed = await once(['sh', '-c', 'exit 6']);
  t.is(failed.status.reason, 'NonZeroExitCode');
  t.is(failed.status.details?.causes?.[0]?.message, '6');
});
