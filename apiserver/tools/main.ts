import { runTool, TOOLS, type ToolName } from './cli';

/**
 * Stand-alone entry of the migration sub-commands (node dist/apiserver/tools/main.js export ...),
 * the same code `svc-apiserver export|import|verify` dispatches to.
 */
if (require.main === module) {
  const [name, ...args] = process.argv.slice(2);
  if (!(TOOLS as readonly string[]).includes(name)) {
    process.stderr.write(`usage: ${TOOLS.join('|')} [flags] (see <sub-command> --help)\n`);
    process.exit(2);
  }
  runTool(name as ToolName, args, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, now: () => new Date() }).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`svc-apiserver ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
