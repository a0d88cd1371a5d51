/**
 * The kernel check of the nftables mode (spec Appendix D; upstream's
 * pkg/proxy/nftables/supported.go): kernel 5.13 or later (the distribution's nft is then 1.0.1 or
 * later, which no longer chokes on other tables' newer rules; kubernetes#122743). The skip option
 * (upstream's KUBE_PROXY_NFTABLES_SKIP_KERNEL_VERSION_CHECK; here proxy.skipKernelVersionCheck or
 * that variable) lowers the floor to 5.4, below which nftables lacks what the rules use.
 */

export const NFTABLES_KERNEL = [5, 13] as const;
export const NFTABLES_KERNEL_SKIPPED = [5, 4] as const;

/** [major, minor] of a /proc/sys/kernel/osrelease text ("6.1.0-18-amd64"); undefined when unreadable. */
export function parseKernelRelease(text: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(text.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

const atLeast = (v: readonly [number, number], min: readonly [number, number]) => v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]);

/** Why the nftables mode cannot run on this kernel, or undefined when it can. */
export function nftablesKernelProblem(osRelease: string, skipCheck: boolean): string | undefined {
  const v = parseKernelRelease(osRelease);
  if (!v) return `could not check kernel version: cannot parse ${JSON.stringify(osRelease.trim())}`;
  const min = skipCheck ? NFTABLES_KERNEL_SKIPPED : NFTABLES_KERNEL;
  if (atLeast(v, min)) return undefined;
  // Upstream's message for the same refusal.
  return `kube-proxy in nftables mode requires kernel ${min.join('.')} or later (this kernel is ${osRelease.trim()})`;
}
