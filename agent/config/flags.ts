/**
 * Command-line flags with the kubelet's names and pflag's syntax: `--flag=value` and
 * `--flag value`, bool flags as `--flag` or `--flag=false`, shorthands `-v 2` / `-v=2` / `-h`.
 * Flags that have a configuration-file field override it (kubelet: flags win over --config).
 */
import { formatFlagUsages } from '../../common/flag-usage';
import { ConfigError, type ConfigProblem } from './config-error';

export type FlagType = 'string' | 'bool' | 'int';

export interface FlagDef {
  name: string;
  short?: string;
  type: FlagType;
  /** Placeholder shown in --help ("string", "int", "mapStringBool"...). */
  valueName?: string;
  usage: string;
  /** Default as shown in --help; omitted when there is none worth showing. */
  shownDefault?: string;
  /** Configuration-file field this flag overrides, shown in --help. */
  configField?: string;
}

export const flagDefs: readonly FlagDef[] = [
  { name: 'address', type: 'string', usage: 'IP address for the agent to serve on (0.0.0.0 or :: for all interfaces)', shownDefault: '"0.0.0.0"', configField: 'address' },
  { name: 'bootstrap-kubeconfig', type: 'string', usage: 'Kubeconfig holding a bootstrap token, used to obtain a client certificate when --kubeconfig does not exist yet; the issued identity is written to --kubeconfig and --cert-dir' },
  { name: 'cert-dir', type: 'string', usage: 'Directory holding the agent\'s TLS certificates and keys', shownDefault: '"<root-dir>/pki"' },
  { name: 'config', type: 'string', usage: `Path to a ${'NodeAgentConfiguration'} file (YAML or JSON). Flags override values in this file` },
  { name: 'config-dir', type: 'string', usage: 'Directory of drop-in configuration files (*.conf, YAML or JSON, each a NodeAgentConfiguration), merged in lexical order onto --config' },
  { name: 'container-runtime-endpoint', type: 'string', usage: 'Container runtime endpoint', shownDefault: '"unix:///run/containerd/containerd.sock"', configField: 'containerRuntimeEndpoint' },
  { name: 'fail-swap-on', type: 'bool', usage: 'Refuse to start when swap is enabled and memorySwap.swapBehavior is not set', shownDefault: 'true', configField: 'failSwapOn' },
  { name: 'feature-gates', type: 'string', valueName: 'mapStringBool', usage: 'A set of key=value pairs for alpha/beta features, e.g. NodeSwap=true,ContainerCheckpoint=false', configField: 'featureGates' },
  { name: 'help', short: 'h', type: 'bool', usage: 'Print this help and exit' },
  { name: 'hostname-override', type: 'string', usage: 'Use this string instead of the machine hostname as the node name and in the node\'s addresses' },
  { name: 'image-service-endpoint', type: 'string', usage: 'Image service endpoint; the container runtime endpoint when unset', configField: 'imageServiceEndpoint' },
  { name: 'kubeconfig', type: 'string', usage: 'Kubeconfig with the agent\'s identity and the API server address' },
  { name: 'lock-file', type: 'string', usage: 'File used to make sure only one agent runs on the machine', shownDefault: '"/var/run/svc-node.lock"' },
  { name: 'log-level', type: 'string', usage: 'Log level: trace, debug, info, warn, error, fatal or silent (alternative to --v)' },
  { name: 'node-ip', type: 'string', usage: 'IP address(es) of the node, comma-separated, at most one per IP family' },
  { name: 'node-labels', type: 'string', valueName: 'mapStringString', usage: 'Labels to add when registering the node, key=value pairs separated by commas' },
  { name: 'port', type: 'int', usage: 'Port for the agent\'s HTTPS server', shownDefault: '10250', configField: 'port' },
  { name: 'root-dir', type: 'string', usage: 'Directory for the agent\'s state files', shownDefault: '"/var/lib/svc-node"' },
  { name: 'tls-cert-file', type: 'string', usage: 'x509 certificate for the agent\'s HTTPS server', configField: 'tlsCertFile' },
  { name: 'tls-private-key-file', type: 'string', usage: 'Private key matching --tls-cert-file', configField: 'tlsPrivateKeyFile' },
  { name: 'version', type: 'bool', usage: 'Print the version and exit' },
  { name: 'v', short: 'v', type: 'int', valueName: 'Level', usage: 'Log verbosity: 0-3 info, 4 debug, 5 and above trace', configField: 'logging.verbosity' },
];

/** Flags as given: last value for scalars, every value in order for repeatable map flags. */
export interface ParsedArgs {
  values: Map<string, string[]>;
}

const byName = new Map(flagDefs.map((d) => [d.name, d]));
const byShort = new Map(flagDefs.filter((d) => d.short).map((d) => [d.short!, d]));

function flagProblem(message: string, flag?: string): ConfigProblem {
  return { source: flag ? `flag --${flag}` : 'command line', message };
}

/** Splits argv (without node and script) into flag values; throws ConfigError on unknown flags, missing values or arguments. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const values = new Map<string, string[]>();
  const problems: ConfigProblem[] = [];
  const add = (def: FlagDef, v: string) => values.set(def.name, [...(values.get(def.name) ?? []), v]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      for (const rest of argv.slice(i + 1)) problems.push(flagProblem(`unexpected argument ${JSON.stringify(rest)}: svc-node takes flags only`));
      break;
    }
    let def: FlagDef | undefined;
    let inline: string | undefined;
    let shown: string;
    if (arg.startsWith('--')) {
      const body = arg.slice(2);
      const eq = body.indexOf('=');
      const name = eq >= 0 ? body.slice(0, eq) : body;
      inline = eq >= 0 ? body.slice(eq + 1) : undefined;
      def = byName.get(name);
      shown = `--${name}`;
      if (!def) {
        problems.push(flagProblem(`unknown flag: --${name}`));
        continue;
      }
    } else if (arg.startsWith('-') && arg.length > 1) {
      const c = arg[1];
      def = byShort.get(c);
      shown = `-${c}`;
      if (!def) {
        problems.push(flagProblem(`unknown shorthand flag: '${c}' in ${arg}`));
        continue;
      }
      const rest = arg.slice(2);
      if (rest.startsWith('=')) inline = rest.slice(1);
      else if (rest !== '') inline = rest;
    } else {
      problems.push(flagProblem(`unexpected argument ${JSON.stringify(arg)}: svc-node takes flags only`));
      continue;
    }
    if (def.type === 'bool') {
      // As pflag: a bool flag never consumes the next argument.
      add(def, inline ?? 'true');
      continue;
    }
    if (inline === undefined) {
      if (i + 1 >= argv.length) {
        problems.push(flagProblem(`flag needs an argument: ${shown}`));
        continue;
      }
      inline = argv[++i]!;
    }
    add(def, inline);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { values };
}

/** The last value given for a flag, or undefined. */
export function lastValue(args: ParsedArgs, name: string): string | undefined {
  const all = args.values.get(name);
  return all ? all[all.length - 1] : undefined;
}

/** Text printed by --help; `cols` is the terminal's width to wrap at (none: no wrapping), as pflag's. */
export function helpText(cols?: number): string {
  const rows = flagDefs.map((d) => {
    const head = `${d.short ? `-${d.short}, ` : '    '}--${d.name}${d.type === 'bool' ? '' : ' ' + (d.valueName ?? d.type)}`;
    let usage = d.usage;
    if (d.shownDefault !== undefined) usage += ` (default ${d.shownDefault})`;
    if (d.configField) usage += ` [config file field: ${d.configField}]`;
    return { head, usage };
  });
  return [
    'svc-node is the node agent of svc: it registers the node with svc-apiserver, keeps the',
    "node's status and Lease fresh, and runs the pods bound to the node.",
    '',
    'Most settings live in a NodeAgentConfiguration file (--config, apiVersion',
    'nodeagent.config.svc.io/v1beta1) and its drop-ins (--config-dir); flags override them.',
    '',
    'Usage:',
    '  svc-node [flags]',
    '',
    'Flags:',
    ...formatFlagUsages(rows, cols),
    '',
  ].join('\n');
}
