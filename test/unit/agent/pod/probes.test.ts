/**
 * Liveness, readiness and startup probes (exec through ExecSync, httpGet, tcpSocket) drive
 * restarts, Ready and started, with upstream's thresholds and initial delays.
 */
import http from 'node:http';
import net from 'node:net';
import test from 'ava';
import { BUSYBOX, isRunningReady, startHarness } from './harness';

test('a failing exec liveness probe restarts the container after failureThreshold periods', async (t) => {
  let healthy = true;
  const h = await startHarness({ sim: { exec: (ctx) => (ctx.cmd.join(' ') === 'cat /tmp/healthy' ? { exitCode: healthy ? 0 : 1, stderr: healthy ? '' : 'cat: can\'t open' } : undefined) } });
  try {
    const pod = h.createPod('live', {
      containers: [
        {
          name: 'c',
          image: BUSYBOX,
          imagePullPolicy: 'IfNotPresent',
          livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, initialDelaySeconds: 5, periodSeconds: 5, failureThreshold: 3, timeoutSeconds: 1 },
        },
      ],
    });
    t.true(await h.until(() => isRunningReady(h.status('live'))));
    await h.clock.advance(30_000);
    t.is((await h.containers(pod.metadata.uid!)).length, 1, 'a passing probe leaves it alone');
    healthy = false;
    const since = h.clock.now();
    t.true(await h.until(async () => (await h.containers(pod.metadata.uid!)).some((c) => c.metadata.attempt === 1), 30_000));
    // Three failures five seconds apart: not before ~10 s.
    t.true(h.clock.now() - since >= 10_000);
    t.truthy(h.log.find('killing container: Container c failed liveness probe, will be restarted')[0]);
    healthy = true;
    t.true(await h.until(() => isRunningReady(h.status('live')) && h.status('live')!.containerStatuses![0].restartCount === 1));
    t.is(h.status('live')!.containerStatuses![0].lastState.terminated?.exitCode, 143);
  } finally {
    await h.stop();
  }
});

test('a readiness probe toggles Ready without restarting; successThreshold and failureThreshold apply', async (t) => {
  let ready = false;
  const h = await startHarness({ sim: { exec: (ctx) => (ctx.cmd[0] === 'check' ? { exitCode: ready ? 0 : 1 } : undefined) } });
  try {
    const pod = h.createPod('ready', {
      containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', readinessProbe: { exec: { command: ['check'] }, periodSeconds: 2, successThreshold: 2, failureThreshold: 2 } }],
    });
    t.true(await h.until(() => h.status('ready')?.phase === 'Running'));
    await h.clock.advance(10_000);
    const s = h.status('ready')!;
    t.false(s.containerStatuses![0].ready);
    t.true(s.containerStatuses![0].started);
    t.is(s.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    t.is(s.conditions?.find((c) => c.type === 'ContainersReady')?.message, 'containers with unready status: [c]');
    ready = true;
    t.true(await h.until(() => isRunningReady(h.status('ready')), 10_000));
    const readyAt = h.status('ready')!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime;
    t.truthy(readyAt);
    ready = false;
    t.true(await h.until(() => h.status('ready')?.conditions?.find((c) => c.type === 'Ready')?.status === 'False', 10_000));
    ready = true;
    t.true(await h.until(() => isRunningReady(h.status('ready')), 10_000));
    t.is((await h.containers(pod.metadata.uid!)).length, 1, 'readiness never restarts');
  } finally {
    await h.stop();
  }
});

test('a startup probe holds liveness back and marks the container started; a failing one restarts it', async (t) => {
  let started = false;
  let livenessRuns = 0;
  const h = await startHarness({
    sim: {
      exec: (ctx) => {
        if (ctx.cmd[0] === 'started') return { exitCode: started ? 0 : 1 };
        if (ctx.cmd[0] === 'alive') {
          livenessRuns++;
          return { exitCode: 0 };
        }
        return undefined;
      },
    },
  });
  try {
    const pod = h.createPod('slowstart', {
      containers: [
        {
          name: 'c',
          image: BUSYBOX,
          imagePullPolicy: 'IfNotPresent',
          startupProbe: { exec: { command: ['started'] }, periodSeconds: 1, failureThreshold: 30 },
          livenessProbe: { exec: { command: ['alive'] }, periodSeconds: 1, failureThreshold: 1 },
        },
      ],
    });
    t.true(await h.until(() => h.status('slowstart')?.phase === 'Running'));
    await h.clock.advance(10_000);
    t.is(livenessRuns, 0, 'no liveness probe before the startup probe succeeds');
    t.false(h.status('slowstart')!.containerStatuses![0].started);
    t.false(h.status('slowstart')!.containerStatuses![0].ready);
    started = true;
    t.true(await h.until(() => isRunningReady(h.status('slowstart')), 10_000));
    t.true(h.status('slowstart')!.containerStatuses![0].started);
    t.true(await h.until(() => livenessRuns > 0, 5000));
    t.is((await h.containers(pod.metadata.uid!)).length, 1);

    // A startup probe that never succeeds: killed after failureThreshold * period.
    const never = h.createPod('neverstarts', {
      containers: [{ name: 'c', image: BUSYBOX, imagePullPolicy: 'IfNotPresent', startupProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 3 } }],
    });
    t.true(await h.until(async () => (await h.containers(never.metadata.uid!)).some((c) => c.metadata.attempt === 1), 20_000));
    t.truthy(h.log.find('failed startup probe, will be restarted')[0]);
  } finally {
    await h.stop();
  }
});

test('httpGet and tcpSocket probes reach the pod address (here the probe host) and judge by status code and connection', async (t) => {
  let code = 200;
  const server = http.createServer((req, res) => {
    res.writeHead(req.url === '/healthz' && req.headers['x-probe'] === 'yes' ? code : 404);
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const httpPort = (server.address() as net.AddressInfo).port;
  const tcp = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
  const tcpPort = (tcp.address() as net.AddressInfo).port;
  const h = await startHarness();
  try {
    h.createPod('web', {
      containers: [
        {
          name: 'c',
          image: BUSYBOX,
          imagePullPolicy: 'IfNotPresent',
          ports: [{ name: 'http', containerPort: httpPort }],
          readinessProbe: { httpGet: { host: '127.0.0.1', port: 'http', path: '/healthz', httpHeaders: [{ name: 'X-Probe', value: 'yes' }] }, periodSeconds: 1, failureThreshold: 1 },
          livenessProbe: { tcpSocket: { host: '127.0.0.1', port: tcpPort }, periodSeconds: 1, failureThreshold: 1 },
        },
      ],
    });
    t.true(await h.until(() => isRunningReady(h.status('web')), 10_000));
    code = 500;
    t.true(await h.until(() => h.status('web')?.containerStatuses?.[0]?.ready === false, 10_000));
    code = 302;
    t.true(await h.until(() => isRunningReady(h.status('web')), 10_000));
    await new Promise<void>((r) => tcp.close(() => r()));
    t.true(await h.until(() => (h.status('web')?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 20_000));
    t.truthy(h.log.find('failed liveness probe')[0]);
  } finally {
    await h.stop();
    server.close();
    tcp.close();
  }
});
