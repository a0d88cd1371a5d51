/**
 * The node's resolver configuration, read from the file of the agent's resolvConf setting
 * (default /etc/resolv.conf), as the kubelet's parseResolvConf reads it: "nameserver" lines add a
 * server, the last "search" line wins (trailing dots trimmed; a lone "." is dropped, where upstream
 * would keep an empty name), the last "options" line wins; comments start with # (and ;, as
 * resolv.conf(5) allows) and other keywords ("domain", "sortlist") are ignored. The cluster DNS server forwards to these
 * nameservers; pods with dnsPolicy Default get them all.
 */
import { readFile } from 'node:fs/promises';

export interface ResolverConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

/** Adds options, a later one replacing an earlier one of the same name ("ndots:2" then "ndots:5"). */
export function mergeOptions(base: readonly string[], more: readonly string[]): string[] {
  const byName = new Map<string, string>();
  for (const o of [...base, ...more]) {
    const name = o.split(':')[0];
    byName.delete(name);
    byName.set(name, o);
  }
  return [...byName.values()];
}

export function parseResolvConf(text: string): ResolverConfig {
  const out: ResolverConfig = { servers: [], searches: [], options: [] };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const fields = line.split(/\s+/);
    const args = fields.slice(1);
    if (fields[0] === 'nameserver' && args.length > 0) out.servers.push(args[0]);
    else if (fields[0] === 'search') out.searches = args.filter((d) => d !== '.').map((d) => d.replace(/\.$/, ''));
    else if (fields[0] === 'options') out.options = args;
  }
  return out;
}

/**
 * The host's resolver configuration for pods: the parsed file, or, when resolvConf is '' (the
 * kubelet's way to turn host DNS off), the local resolver only: 127.0.0.1 (::1 on an IPv6-only
 * node) and the search list "." as upstream does. A missing file is an error the caller reports.
 */
export async function readHostResolverConfig(path: string, ipv6Only = false): Promise<ResolverConfig> {
  if (path === '') return { servers: [ipv6Only ? '::1' : '127.0.0.1'], searches: ['.'], options: [] };
  return parseResolvConf(await readFile(path, 'utf8'));
}
