/**
 * kubectl through a real svc-apiserver and svc-node to real containerd and runc (issue 21, item
 * 4): kubectl 1.32 (WebSocket; joined to containerd's SPDY stream server by the agent) and 1.27
 * (SPDY; forwarded to containerd as it came). exec with its exit code, stdin, a terminal, cp both
 * ways (busybox tar over exec), and port-forward to a busybox httpd in the pod. Every client runs
 * as a process with a bounded timeout.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test from 'ava';
import { startContainerdNode, type ContainerdNode } from '../../helpers/containerd-node';
import { freePort } from '../../helpers/free-port';
import { runUnderPty } from '../../helpers/pty';
import { kubectlOk, run, type Run } from '../../helpers/real-clients';
import { runPod } from '../checkpoint/checkpoint-env';

const KUBECTL_132 = '/usr/bin/kubectl';
/** The older kubectl binaries sit next to /usr/bin/kubectl's target; 1.27 speaks SPDY only. */
const KUBECTL_127 = join(dirname(realpathSync(KUBECTL_132)), 'kubectl.1.27');
const NODE = 'e2e-kubectl-ctrd';
let node: ContainerdNode | undefined;

function n(): ContainerdNode {
  if (!node) throw new Error('the node did not start (see the before hook)');
  return node;
}

test.before(async () => {
  const port = await freePort();
  node = await startContainerdNode({ nodeName: NODE, args: ['--node-ip=127.0.0.1'], configLines: ['address: 127.0.0.1', `port: ${port}`, 'nodeStatusUpdateFrequency: 1s'] });
  await runPod(node.api, NODE, 'web', node.ctrd.image);
  // busybox httpd daemonizes: the exec ends, the server stays in the pod (serving /etc).
  await kubectlOk(node.api.kubeconfig, ['exec', 'web', '--', 'httpd', '-p', '8080', '-h', '/etc']);
});

test.after.always(async () => {
  await node?.stop();
});

const kubectl = (bin: string, args: string[], input?: string): Promise<Run> =>
  run(bin, ['--kubeconfig', n().api.kubeconfig, ...args], { timeoutMs: 60_000, ...(input !== undefined ? { input } : {}) });

for (const [label, bin] of [
  ['1.32 (WebSocket)', KUBECTL_132],
  ['1.27 (SPDY)', KUBECTL_127],
] as const) {
  test.serial(`kubectl ${label}: exec runs in the container and passes its exit code through`, async (t) => {
    const r = await kubectl(bin, ['exec', 'web', '--', 'hostname']);
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, 'web\n');
    const failed = await kubectl(bin, ['exec', 'web', '--', 'sh', '-c', 'exit 3']);
    t.is(failed.code, 3, failed.stderr);
  });

  test.serial(`kubectl ${label}: exec -i sends stdin to the container`, async (t) => {
    const input = 'a line for runc\n'.repeat(2000);
    const r = await kubectl(bin, ['exec', '-i', 'web', '--', 'cat'], input);
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, input);
  });

  test.serial(`kubectl ${label}: exec -it gives the container's shell a terminal`, async (t) => {
    const r = await runUnderPty(bin, ['--kubeconfig', n().api.kubeconfig, 'exec', '-it', 'web', '--', 'sh'], 'echo tty-$(tty | cut -c1-8)\rexit 5\r');
    // busybox sh echoes the typed line; the command's output line is the expanded one.
    t.regex(r.stdout, /(^|\n)tty-\/dev\/pts\r?\n/, r.stdout);
    t.is(r.code, 5, r.stdout);
  });

  test.serial(`kubectl ${label}: cp copies a file into the container and back`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cp-ctrd-'));
    try {
      const name = `cp-${label.slice(0, 4)}.txt`;
      const content = `copied through containerd by kubectl ${label}\n`.repeat(500);
      writeFileSync(join(dir, name), content);
      const into = await kubectl(bin, ['cp', join(dir, name), `web:/tmp/${name}`]);
      t.is(into.code, 0, into.stderr);
      t.is((await kubectl(bin, ['exec', 'web', '--', 'wc', '-c', `/tmp/${name}`])).stdout.trim(), `${content.length} /tmp/${name}`);
      const back = await kubectl(bin, ['cp', `web:/tmp/${name}`, join(dir, 'back.txt')]);
      t.is(back.code, 0, back.stderr);
      t.is(readFileSync(join(dir, 'back.txt'), 'utf8'), content);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.serial(`kubectl ${label}: port-forward reaches the pod's httpd`, async (t) => {
    const local = await freePort();
    const pf = spawn(bin, ['--kubeconfig', n().api.kubeconfig, 'port-forward', 'pod/web', `${local}:8080`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    pf.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const killer = setTimeout(() => pf.kill('SIGKILL'), 60_000);
    try {
      await new Promise<void>((resolve, reject) => {
        pf.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('Forwarding from')) resolve();
        });
        pf.once('exit', () => reject(new Error(`port-forward exited: ${out}`)));
      });
      // httpd serves the pod's /etc: its hostname file names the pod.
      for (let i = 0; i < 3; i++) {
        const body = await new Promise<string>((resolve, reject) => {
          get({ host: '127.0.0.1', port: local, path: '/hostname' }, (res) => {
            let b = '';
            res.on('data', (d: Buffer) => (b += d.toString()));
            res.on('end', () => resolve(b));
          }).on('error', reject);
        });
        t.is(body, 'web\n', out);
      }
    } finally {
      clearTimeout(killer);
      pf.kill('SIGTERM');
    }
  });

  test.serial(`kubectl ${label}: debug -it attaches to a new ephemeral container`, async (t) => {
    const image = n().ctrd.image;
    const r = await runUnderPty(bin, ['--kubeconfig', n().api.kubeconfig, 'debug', '-it', 'web', `--image=${image}`, '--image-pull-policy=IfNotPresent', '--', 'sh'], 'echo debug-$((6*7))\rexit\r');
    t.regex(r.stdout, /(^|\n)debug-42\r?\n/, r.stdout);
    t.is(r.code, 0, r.stdout);
  });

  test.serial(`kubectl ${label}: run -it --rm runs a shell in a new pod, then deletes the pod`, async (t) => {
    const name = `once-${label.slice(2, 4)}`;
    const overrides = JSON.stringify({ spec: { nodeName: NODE, terminationGracePeriodSeconds: 1 } });
    const r = await runUnderPty(bin, ['--kubeconfig', n().api.kubeconfig, 'run', name, '-it', '--rm', '--restart=Never', `--image=${n().ctrd.image}`, '--image-pull-policy=IfNotPresent', `--overrides=${overrides}`, '--', 'sh'], 'echo run-$((6*7))\rexit\r', 120_000);
    t.regex(r.stdout, /(^|\n)run-42\r?\n/, r.stdout);
    t.is(r.code, 0, r.stdout);
    const gone = await kubectl(bin, ['get', 'pod', name]);
    t.regex(gone.stderr, /NotFound|not found/, gone.stdout);
  });
}
