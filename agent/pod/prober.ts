/**
 * Runs one probe as upstream's kubelet prober does: exec through the runtime's ExecSync (exit code
 * 0 is success; a timeout is a failure), httpGet to the pod IP (or the probe's host) where any
 * status from 200 to 399 is success, tcpSocket where an accepted connection is success. Named
 * ports are looked up in the container's ports. gRPC probes are not supported and fail saying so.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { isRuntimeError, type RuntimeService } from '../cri';
import type { Container, Probe } from '../api/core-v1';

export interface ProbeOutcome {
  ok: boolean;
  /** What the probe saw, for logs and events ("HTTP probe failed with statuscode: 500"). */
  output: string;
}

export interface ProbeTargetInfo {
  containerId: string;
  container: Container;
  /** The pod's IPs (the node's for host-network pods). */
  podIPs: readonly string[];
}

/** The seam probe workers call; a fake in tests. */
export interface Prober {
  /** Runs the probe once within its timeoutSeconds. Never rejects: failures are outcomes. */
  run(probe: Probe, target: ProbeTargetInfo, signal?: AbortSignal): Promise<ProbeOutcome>;
}

function resolvePort(port: number | string, c: Container): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

function hostFor(host: string | undefined, ips: readonly string[]): string {
  return host || ips[0] || '127.0.0.1';
}

export class DefaultProber implements Prober {
  constructor(private readonly runtime: RuntimeService) {}

  async run(probe: Probe, target: ProbeTargetInfo, signal?: AbortSignal): Promise<ProbeOutcome> {
    const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
    try {
      if (probe.exec) return await this.exec(probe.exec.command ?? [], target, timeoutMs, signal);
      if (probe.httpGet) {
        const port = resolvePort(probe.httpGet.port, target.container);
        if (port === undefined) return { ok: false, output: `unknown port ${JSON.stringify(probe.httpGet.port)}` };
        return await httpProbe(probe.httpGet.scheme ?? 'HTTP', hostFor(probe.httpGet.host, target.podIPs), port, probe.httpGet.path ?? '/', probe.httpGet.httpHeaders ?? [], timeoutMs);
      }
      if (probe.tcpSocket) {
        const port = resolvePort(probe.tcpSocket.port, target.container);
        if (port === undefined) return { ok: false, output: `unknown port ${JSON.stringify(probe.tcpSocket.port)}` };
        return await tcpProbe(hostFor(probe.tcpSocket.host, target.podIPs), port, timeoutMs);
      }
      if (probe.grpc) return { ok: false, output: 'gRPC probes are not supported by svc-node' };
      return { ok: false, output: 'probe has no handler' };
    } catch (e) {
      return { ok: false, output: (e as Error).message };
    }
  }

  private async exec(cmd: string[], target: ProbeTargetInfo, timeoutMs: number, signal?: AbortSignal): Promise<ProbeOutcome> {
    try {
      const r = await this.runtime.execSync(target.containerId, cmd, Math.ceil(timeoutMs / 1000), { timeoutMs: timeoutMs + 5000, ...(signal ? { signal } : {}) });
      const output = (r.stdout.toString('utf8') + r.stderr.toString('utf8')).slice(0, 1024);
      return { ok: r.exitCode === 0, output: r.exitCode === 0 ? output : `command ${JSON.stringify(cmd)} exited with ${r.exitCode}: ${output}` };
    } catch (e) {
      if (isRuntimeError(e, 'DeadlineExceeded')) return { ok: false, output: `command ${JSON.stringify(cmd)} timed out` };
      return { ok: false, output: (e as Error).message };
    }
  }
}

/** GET scheme://host:port/path; 200-399 is success (upstream: redirects are not followed here; a 3xx counts as success). */
export function httpProbe(scheme: string, host: string, port: number, path: string, headers: { name: string; value: string }[], timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const mod = scheme === 'HTTPS' ? https : http;
    const hdrs: Record<string, string> = { 'user-agent': 'svc-probe/1.0', accept: '*/*' };
    for (const h of headers) hdrs[h.name.toLowerCase()] = h.value;
    const req = mod.request(
      { host, port, path: path.startsWith('/') ? path : `/${path}`, method: 'GET', headers: hdrs, timeout: timeoutMs, ...(scheme === 'HTTPS' ? { rejectUnauthorized: false } : {}) },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          if (body.length < 1024) body += d;
        });
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          resolve(code >= 200 && code < 400 ? { ok: true, output: body.slice(0, 1024) } : { ok: false, output: `HTTP probe failed with statuscode: ${code}` });
        });
        res.on('error', (e) => resolve({ ok: false, output: e.message }));
      },
    );
    req.on('timeout', () => {
      req.destroy(new Error(`Get "${scheme.toLowerCase()}://${host}:${port}${path}": context deadline exceeded`));
    });
    req.on('error', (e) => resolve({ ok: false, output: e.message }));
    req.end();
  });
}

/** Opens and closes a TCP connection. */
export function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ ok: false, output: `dial tcp ${host}:${port}: i/o timeout` });
    }, timeoutMs);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ ok: true, output: '' });
    });
    sock.once('error', (e) => {
      clearTimeout(timer);
      resolve({ ok: false, output: `dial tcp ${host}:${port}: ${e.message}` });
    });
  });
}
