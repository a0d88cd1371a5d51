/**
 * Prints /etc/svc/node.yaml: a NodeAgentConfiguration that sets nothing but lists every field,
 * commented out, at its default, generated from the schema the agent validates with so the two
 * never drift. Run by packaging/build-deb.mjs (bundled with esbuild); uncommenting any line keeps
 * the file valid.
 */
import YAML from 'yaml';
import { defaultOf } from '../../agent/config/field-spec';
import { nodeAgentConfigSchema } from '../../agent/config/schema';
import { configAPIVersion, configKind } from '../../agent/config/types';
import { formatDuration } from '../../apiserver/api/duration';

/** The parts of a field spec this printer looks at. */
interface SpecView {
  kind: string;
  fields?: Record<string, SpecView>;
  of?: SpecView;
}

/** Converts an in-memory value to its file form: durations (milliseconds) become Go duration strings. */
function fileForm(value: unknown, spec: SpecView): unknown {
  switch (spec.kind) {
    case 'duration':
      return formatDuration(value as number);
    case 'struct': {
      const obj = value as Record<string, unknown>;
      return Object.fromEntries(Object.entries(spec.fields ?? {}).map(([k, s]) => [k, fileForm(obj[k], s)]));
    }
    case 'list':
      return (value as unknown[]).map((v) => fileForm(v, spec.of!));
    case 'map':
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, fileForm(v, spec.of!)]));
    default:
      return value;
  }
}

const header = `# svc-node configuration, read by svc-node.service (--config=/etc/svc/node.yaml).
#
# Every field is optional. The commented-out lines show each field at its default; uncomment and
# change the ones you need. Files in /etc/svc/node.conf.d/*.conf are merged on top of this one in
# lexical order, and command-line flags (SVC_NODE_ARGS in /etc/default/svc-node) win over both.
# Durations are Go duration strings ("10s", "5m0s"). Apply changes with
# \`systemctl restart svc-node\`; see svc-node(8) and /usr/share/doc/svc/install.md.
`;

/** The whole file text. */
export function defaultNodeConfig(): string {
  const spec = nodeAgentConfigSchema as unknown as SpecView;
  const defaults = fileForm(defaultOf(nodeAgentConfigSchema), spec);
  const body = YAML.stringify(defaults, { lineWidth: 0 })
    .trimEnd()
    .split('\n')
    .map((line) => `# ${line}`)
    .join('\n');
  return `${header}apiVersion: ${configAPIVersion}\nkind: ${configKind}\n${body}\n`;
}

process.stdout.write(defaultNodeConfig());
