/**
 * Swap detection and the start-up decision. Spec Appendix D: the agent fails when swap is on
 * unless memorySwap.swapBehavior is set (NoSwap or LimitedSwap). Upstream kubelet differs
 * slightly: there failSwapOn alone decides; here an explicit swapBehavior also allows start.
 */
import { promises as fsp } from 'node:fs';
import type { SwapBehavior } from '../config/types';

export interface SwapDevice {
  filename: string;
  type: string;
  sizeBytes: number;
  usedBytes: number;
  priority: number;
}

/** Parses /proc/swaps (header line, then one device per line; sizes in KiB). Ignores malformed lines. */
export function parseProcSwaps(text: string): SwapDevice[] {
  const out: SwapDevice[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 5) continue;
    const [size, used, prio] = [Number(f[2]), Number(f[3]), Number(f[4])];
    if (!Number.isFinite(size) || !Number.isFinite(used)) continue;
    // A path with spaces is written with \040 escapes by the kernel.
    out.push({ filename: f[0].replace(/\\040/g, ' '), type: f[1], sizeBytes: size * 1024, usedBytes: used * 1024, priority: prio });
  }
  return out;
}

/** Reads the swap devices, or undefined when the file does not exist (no swap support in the kernel). */
export async function readSwaps(path = '/proc/swaps'): Promise<SwapDevice[] | undefined> {
  try {
    return parseProcSwaps(await fsp.readFile(path, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export type SwapDecision =
  | { start: true; swapOn: boolean; behavior: 'NoSwap' | 'LimitedSwap'; note?: string }
  | { start: false; message: string };

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)}Gi`;
}

/** Decides whether the agent may start given the swap devices and its settings. Pure. */
export function decideSwap(devices: readonly SwapDevice[] | undefined, opts: { failSwapOn: boolean; swapBehavior: SwapBehavior }): SwapDecision {
  const swapOn = (devices ?? []).length > 0;
  const behavior = opts.swapBehavior === '' ? 'NoSwap' : opts.swapBehavior;
  if (!swapOn) {
    return { start: true, swapOn, behavior, note: devices === undefined ? '/proc/swaps not found; assuming swap is off' : undefined };
  }
  const list = devices!.map((d) => `${d.filename} (${gib(d.sizeBytes)})`).join(', ');
  if (opts.failSwapOn && opts.swapBehavior === '') {
    return {
      start: false,
      message:
        `running with swap on is not supported: swap is enabled on ${list}. ` +
        'Set memorySwap.swapBehavior to NoSwap (pods use no swap) or LimitedSwap in the configuration file, ' +
        'or set failSwapOn: false (flag --fail-swap-on=false), or turn swap off (swapoff -a)',
    };
  }
  return { start: true, swapOn, behavior, note: `swap is enabled on ${list}; pods run with swap behaviour ${behavior}` };
}
