/**
 * Pod IPs for the simulator from one IPv4 CIDR, lowest free address first, like CNI host-local
 * IPAM. The network and gateway (.0, .1) and broadcast addresses are never handed out.
 */
import { RuntimeError } from './errors';

export class IpPool {
  private readonly base: number;
  private readonly size: number;
  private readonly used = new Set<number>();

  /** Throws Error for a malformed CIDR or one outside /8../30. */
  constructor(cidr: string) {
    const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
    if (!m) throw new Error(`simulator podCidr ${JSON.stringify(cidr)} is not an IPv4 CIDR`);
    const octets = m.slice(1, 5).map(Number);
    const bits = Number(m[5]);
    if (octets.some((o) => o > 255) || bits < 8 || bits > 30) throw new Error(`simulator podCidr ${cidr} is out of range (/8../30)`);
    const ip = octets.reduce((n, o) => n * 256 + o, 0);
    this.size = 2 ** (32 - bits);
    this.base = ip - (ip % this.size);
  }

  /** Takes the lowest free address. Rejects ResourceExhausted (host-local's message) when none is left. */
  allocate(): string {
    for (let off = 2; off < this.size - 1; off++) {
      if (!this.used.has(off)) {
        this.used.add(off);
        return format(this.base + off);
      }
    }
    throw new RuntimeError('ResourceExhausted', 'failed to allocate for range 0: no IP addresses available in range set', 'RunPodSandbox');
  }

  /** Returns an address to the pool; unknown addresses are ignored. */
  release(ip: string): void {
    const n = ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
    this.used.delete(n - this.base);
  }
}

function format(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}
