/**
 * loadAgentConfig: flags -> --config -> --config-dir drop-ins -> flags again, the order the
 * kubelet uses (server.go: loadConfigFile, mergeKubeletConfigurations, then flag precedence).
 * Everything is validated before the agent touches the machine; any problem is a ConfigError
 * whose message names the file (or flag) and the field.
 */
import { promises as fsp } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isIP } from 'node:net';
import YAML from 'yaml';
import { ConfigError, HelpRequested, type ConfigProblem } from './config-error';
import { decode, mergeOnto, visitSet, withDefaults, defaultOf, type FieldProblem } from './field-spec';
import { FeatureGates, featureGateWarnings, parseFeatureGatesFlag, parseGoBool } from './feature-gates';
import { svcVersion } from '../../common/version';
import { helpText, lastValue, parseArgs, type ParsedArgs } from './flags';
import { checkNodeLabels, parseLabelsFlag } from './labels';
import { nodeAgentConfigSchema, pathRefFields } from './schema';
import { configAPIVersion, configKind, type AgentConfig, type AgentFlags, type LogLevel, type NodeAgentConfiguration } from './types';
import { Provenance, validateMerged } from './validate';

export { ConfigError, HelpRequested } from './config-error';
export type { AgentConfig, AgentFlags, NodeAgentConfiguration, LogLevel } from './types';

/** Filesystem and host seams, so tests never touch /etc. */
export interface ConfigEnv {
  /** Reads a whole file as UTF-8; rejects with a Node fs error. */
  readFile?: (path: string) => Promise<string>;
  /** Lists the names (not paths) in a directory; rejects with a Node fs error. */
  readdir?: (path: string) => Promise<string[]>;
  /** The machine's hostname, used as node name without --hostname-override. */
  hostname?: () => string;
  /** Base for relative flag paths; process.cwd() by default. */
  cwd?: string;
  /** Width of the terminal --help is printed to (its lines wrap to it); undefined: not a terminal, no wrapping. */
  helpColumns?: number;
}

export const defaultRootDir = '/var/lib/svc-node';
export const defaultLockFile = '/var/run/svc-node.lock';
const logLevels: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Maps klog-style verbosity to a pino level: 0-3 info, 4 debug, 5+ trace (Kubernetes logging conventions). */
export function levelForVerbosity(v: number): LogLevel {
  if (v >= 5) return 'trace';
  if (v >= 4) return 'debug';
  return 'info';
}

/**
 * Loads the full configuration from argv (process.argv.slice(2)). Rejects with ConfigError on any
 * invalid input and with HelpRequested for --help; never with anything else for bad input.
 */
export async function loadAgentConfig(argv: readonly string[], env: ConfigEnv = {}): Promise<AgentConfig> {
  const readFile = env.readFile ?? ((p: string) => fsp.readFile(p, 'utf8'));
  const readdir = env.readdir ?? ((p: string) => fsp.readdir(p));
  const cwd = env.cwd ?? process.cwd();

  const args = parseArgs(argv);
  if (lastValue(args, 'help') !== undefined && parseGoBool(lastValue(args, 'help')!) !== false) throw new HelpRequested(helpText(env.helpColumns));
  if (lastValue(args, 'version') !== undefined && parseGoBool(lastValue(args, 'version')!) !== false) throw new HelpRequested(`svc-node ${svcVersion()}\n`);

  const flagProblems: ConfigProblem[] = [];
  const flags = resolveFlags(args, cwd, flagProblems);
  const overlays = flagOverlays(args, cwd, flagProblems);
  if (flagProblems.length > 0) throw new ConfigError(flagProblems);

  const prov = new Provenance();
  const sources: string[] = [];
  let merged: unknown = defaultOf(nodeAgentConfigSchema);

  if (flags.configFile) {
    const partial = await loadFile(flags.configFile, readFile);
    merged = withDefaults(partial, nodeAgentConfigSchema);
    visitSet(partial, nodeAgentConfigSchema, '', (p) => prov.set(p, flags.configFile));
    sources.push(flags.configFile);
  }
  if (flags.configDir) {
    for (const file of await dropInFiles(flags.configDir, readdir)) {
      const partial = await loadFile(file, readFile);
      merged = mergeOnto(merged, partial, nodeAgentConfigSchema, '', (p) => prov.set(p, file));
      sources.push(file);
    }
  }
  for (const o of overlays) merged = mergeOnto(merged, o.partial, nodeAgentConfigSchema, '', (p) => prov.set(p, o.source));

  // The one place the schema-checked value becomes the typed config.
  const config = merged as NodeAgentConfiguration;
  if (config.imageServiceEndpoint === '') config.imageServiceEndpoint = config.containerRuntimeEndpoint;
  const featureGates = new FeatureGates(config.featureGates);
  const problems = validateMerged(config, featureGates, prov);
  if (problems.length > 0) throw new ConfigError(problems);

  const levelFlag = lastValue(args, 'log-level');
  const logLevel = (levelFlag as LogLevel | undefined) ?? levelForVerbosity(config.logging.verbosity);
  const nodeName = flags.hostnameOverride || (env.hostname ?? osHostname)().trim().toLowerCase();

  return { flags, config, featureGates, nodeName, logLevel, sources, warnings: featureGateWarnings(config.featureGates), fieldSource: (path) => prov.sourceOf(path) };
}

function describeFsError(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'not a directory';
    default:
      return err.message ?? String(e);
  }
}

/** `*.conf` names of a drop-in directory in lexical (byte) order, as full paths. */
async function dropInFiles(dir: string, readdir: (p: string) => Promise<string[]>): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    throw ConfigError.single(dir, `cannot read drop-in directory (--config-dir): ${describeFsError(e)}`);
  }
  return names
    .filter((n) => n.endsWith('.conf'))
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map((n) => join(dir, n));
}

/** Reads, parses and strictly decodes one NodeAgentConfiguration file into a partial. */
async function loadFile(file: string, readFile: (p: string) => Promise<string>): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file);
  } catch (e) {
    throw ConfigError.single(file, `cannot read configuration file: ${describeFsError(e)}`);
  }
  const raw = parseDocument(file, text);
  const problems: FieldProblem[] = [];
  const kind = raw['kind'];
  const apiVersion = raw['apiVersion'];
  if (kind === undefined) problems.push({ field: 'kind', message: `required value: must be ${JSON.stringify(configKind)}` });
  else if (kind !== configKind) problems.push({ field: 'kind', message: `unsupported value ${JSON.stringify(kind)}: supported values: ${JSON.stringify(configKind)}` });
  if (apiVersion === undefined) problems.push({ field: 'apiVersion', message: `required value: must be ${JSON.stringify(configAPIVersion)}` });
  else if (apiVersion !== configAPIVersion) problems.push({ field: 'apiVersion', message: `unsupported value ${JSON.stringify(apiVersion)}: supported values: ${JSON.stringify(configAPIVersion)}` });
  const body = { ...raw };
  delete body['kind'];
  delete body['apiVersion'];
  const partial = decode(body, nodeAgentConfigSchema, '', problems);
  if (problems.length > 0) throw new ConfigError(problems.map((p) => ({ source: file, field: p.field, message: p.message })));
  resolvePathRefs(partial as Record<string, unknown>, dirname(file));
  return partial;
}

/** YAML 1.2 (a superset of JSON) into a plain object; one document, unique keys, no unknown tags. */
function parseDocument(file: string, text: string): Record<string, unknown> {
  const lines = new YAML.LineCounter();
  const docs = YAML.parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false, strict: true, lineCounter: lines });
  const list = Array.isArray(docs) ? docs : [];
  const nonEmpty = list.filter((d) => d.contents !== null || d.errors.length > 0);
  if (nonEmpty.length === 0) throw ConfigError.single(file, 'configuration file is empty');
  if (nonEmpty.length > 1) throw ConfigError.single(file, `configuration file holds ${nonEmpty.length} YAML documents; exactly one is expected`);
  const doc = nonEmpty[0];
  const issue = doc.errors[0] ?? doc.warnings[0];
  if (issue) {
    const pos = lines.linePos(issue.pos[0]);
    const where = pos.line > 0 ? ` at line ${pos.line}, column ${pos.col}` : '';
    const what = issue.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    throw ConfigError.single(file, `invalid YAML or JSON${where}: ${what}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw ConfigError.single(file, `invalid YAML or JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw ConfigError.single(file, `expected a ${configKind} object at the top level, got ${Array.isArray(value) ? 'a list' : JSON.stringify(value)}`);
  }
  return value as Record<string, unknown>;
}

function resolvePathRefs(partial: Record<string, unknown>, base: string): void {
  for (const ref of pathRefFields) {
    const parts = ref.split('.');
    let obj: Record<string, unknown> | undefined = partial;
    for (const p of parts.slice(0, -1)) {
      const next: unknown = obj?.[p];
      obj = typeof next === 'object' && next !== null ? (next as Record<string, unknown>) : undefined;
    }
    const leaf = parts[parts.length - 1];
    const v = obj?.[leaf];
    if (obj && typeof v === 'string' && v !== '' && !isAbsolute(v)) obj[leaf] = resolve(base, v);
  }
}

const subdomainRe = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function resolveFlags(args: ParsedArgs, cwd: string, problems: ConfigProblem[]): AgentFlags {
  const bad = (flag: string, message: string) => problems.push({ source: `flag --${flag}`, message });
  const path = (flag: string, def = ''): string => {
    const v = lastValue(args, flag) ?? def;
    return v === '' ? '' : resolve(cwd, v);
  };
  const rootDir = path('root-dir', defaultRootDir);
  if (rootDir === '') bad('root-dir', 'must not be empty');
  const kubeconfig = path('kubeconfig');
  const bootstrapKubeconfig = path('bootstrap-kubeconfig');
  if (bootstrapKubeconfig && !kubeconfig) bad('bootstrap-kubeconfig', 'requires --kubeconfig: the identity obtained with the bootstrap token is written there');

  const hostnameOverride = (lastValue(args, 'hostname-override') ?? '').trim().toLowerCase();
  if (lastValue(args, 'hostname-override') !== undefined) {
    if (hostnameOverride === '') bad('hostname-override', 'empty hostname is invalid');
    else if (hostnameOverride.length > 253 || !subdomainRe.test(hostnameOverride)) {
      bad('hostname-override', `invalid value ${JSON.stringify(hostnameOverride)}: a node name must be a lowercase RFC 1123 subdomain (letters, digits, '-' and '.')`);
    }
  }

  const nodeIPs: string[] = [];
  const ipText = lastValue(args, 'node-ip');
  if (ipText !== undefined) {
    for (const ip of ipText.split(',').map((s) => s.trim())) {
      if (!isIP(ip)) bad('node-ip', `invalid value ${JSON.stringify(ip)}: must be an IP address`);
      else nodeIPs.push(ip);
    }
    if (nodeIPs.length > 2 || (nodeIPs.length === 2 && isIP(nodeIPs[0]) === isIP(nodeIPs[1]))) {
      bad('node-ip', `invalid value ${JSON.stringify(ipText)}: at most one IPv4 and one IPv6 address`);
    }
  }

  // pflag's map flags merge repeated occurrences.
  let nodeLabels: Record<string, string> = {};
  for (const text of args.values.get('node-labels') ?? []) {
    try {
      nodeLabels = { ...nodeLabels, ...parseLabelsFlag(text) };
    } catch (e) {
      bad('node-labels', (e as Error).message);
    }
  }
  for (const why of checkNodeLabels(nodeLabels)) bad('node-labels', why);

  const level = lastValue(args, 'log-level');
  if (level !== undefined) {
    if (!(logLevels as readonly string[]).includes(level)) {
      bad('log-level', `unsupported value ${JSON.stringify(level)}: supported values: ${logLevels.map((l) => JSON.stringify(l)).join(', ')}`);
    }
    if (args.values.has('v')) bad('log-level', 'cannot be combined with --v; use one of them');
  }

  return {
    configFile: path('config'),
    configDir: path('config-dir'),
    kubeconfig,
    bootstrapKubeconfig,
    rootDir,
    certDir: path('cert-dir', rootDir ? join(rootDir, 'pki') : ''),
    hostnameOverride,
    nodeIPs,
    nodeLabels,
    lockFile: path('lock-file', defaultLockFile),
  };
}

interface FlagOverlay {
  source: string;
  partial: unknown;
}

/** Flags that override configuration fields, decoded through the same schema as files. */
function flagOverlays(args: ParsedArgs, cwd: string, problems: ConfigProblem[]): FlagOverlay[] {
  const out: FlagOverlay[] = [];
  const add = (flag: string, raw: Record<string, unknown>) => {
    const fp: FieldProblem[] = [];
    const partial = decode(raw, nodeAgentConfigSchema, '', fp);
    for (const p of fp) problems.push({ source: `flag --${flag}`, message: p.message });
    if (fp.length === 0) out.push({ source: `flag --${flag}`, partial });
  };
  const str = (flag: string, field: string, isPath = false) => {
    const v = lastValue(args, flag);
    if (v !== undefined) add(flag, { [field]: isPath && v !== '' ? resolve(cwd, v) : v });
  };
  const int = (flag: string, build: (n: number) => Record<string, unknown>) => {
    const v = lastValue(args, flag);
    if (v === undefined) return;
    if (!/^[+-]?\d+$/.test(v.trim())) problems.push({ source: `flag --${flag}`, message: `invalid value ${JSON.stringify(v)}: must be an integer` });
    else add(flag, build(Number(v)));
  };
  str('container-runtime-endpoint', 'containerRuntimeEndpoint');
  str('image-service-endpoint', 'imageServiceEndpoint');
  str('address', 'address');
  str('tls-cert-file', 'tlsCertFile', true);
  str('tls-private-key-file', 'tlsPrivateKeyFile', true);
  int('port', (n) => ({ port: n }));
  int('v', (n) => ({ logging: { verbosity: n } }));
  const swap = lastValue(args, 'fail-swap-on');
  if (swap !== undefined) {
    const b = parseGoBool(swap);
    if (b === undefined) problems.push({ source: 'flag --fail-swap-on', message: `invalid value ${JSON.stringify(swap)}: must be true or false` });
    else add('fail-swap-on', { failSwapOn: b });
  }
  const gates = args.values.get('feature-gates');
  if (gates) {
    let map: Record<string, boolean> = {};
    try {
      for (const g of gates) map = { ...map, ...parseFeatureGatesFlag(g) };
      // Kubelet: --feature-gates merge into the file's featureGates key by key, flags winning.
      add('feature-gates', { featureGates: map });
    } catch (e) {
      problems.push({ source: 'flag --feature-gates', message: (e as Error).message });
    }
  }
  return out;
}
