/**
 * Errors raised while loading the agent's configuration. main.ts prints `message` and exits 1;
 * the message already names the file (or flag) and the field, so no stack trace is ever needed.
 */
import { InvalidArgumentError } from '../errors';

/** One thing wrong with the configuration, attributed to where it came from. */
export interface ConfigProblem {
  /** A file path, `flag --name`, or `default value`. */
  source: string;
  /** Field path as Kubernetes prints it (`memorySwap.swapBehavior`, `evictionHard[memory.available]`). */
  field?: string;
  message: string;
}

export function formatProblem(p: ConfigProblem): string {
  return p.field ? `${p.source}: field ${p.field}: ${p.message}` : `${p.source}: ${p.message}`;
}

export class ConfigError extends InvalidArgumentError {
  override readonly name = 'ConfigError';
  override readonly code = 'SVC_NODE_ERR_CONFIG';
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(
      problems.length === 1
        ? formatProblem(problems[0])
        : `invalid configuration (${problems.length} problems):\n` + problems.map((p) => '  - ' + formatProblem(p)).join('\n'),
    );
  }

  static single(source: string, message: string, field?: string): ConfigError {
    return new ConfigError([{ source, field, message }]);
  }
}

/** Thrown by loadAgentConfig for --help: main prints `text` to stdout and exits 0, as the kubelet does. */
export class HelpRequested extends InvalidArgumentError {
  override readonly name = 'HelpRequested';
  override readonly code = 'SVC_NODE_HELP_REQUESTED';
  constructor(readonly text: string) {
    super('help requested');
  }
}
