/**
 * Bundles each program from its TypeScript sources into one CommonJS file with esbuild, so
 * start-up reads one file instead of hundreds. Native modules stay external (they are shipped in
 * node_modules beside the bundle). Code that finds files at run time relative to its own module
 * (__dirname, __filename, require.resolve) breaks when bundled, so every such input must be listed
 * in `runtimeLookups` with how the package serves it; an unlisted one fails the build.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

/** Modules that cannot be bundled: native addons, loaded through `bindings` from node_modules. */
export const externalModules = ['better-sqlite3', 'sd-notify'];

/**
 * Inputs that look up files at run time, and why each works in the package. Keys are matched
 * against esbuild's input paths (relative to the repository).
 */
export const runtimeLookups = [
  { input: /^common\/version\.ts$/, why: 'walks up from the bundle to package.json: /usr/lib/svc/package.json is shipped' },
  { input: /^agent\/platform\/x509-process\.ts$/, why: 'runs x509-child.js next to the bundle: build-deb bundles agent/platform/x509-child.ts as /usr/lib/svc/x509-child.js' },
  { input: /^agent\/platform\/proto-files\.ts$/, why: 'walks up from the bundle to proto/: /usr/lib/svc/proto is shipped (build-deb copies every proto/**/*.proto)' },
  { input: /(^|\/)node_modules\/undici\/index\.js$/, why: 'keeps __filename for stack traces only' },
  { input: /(^|\/)node_modules\/node-cron\/dist\/node-cron\.cjs$/, why: 'forks dist/daemon.cjs only for background tasks given as a file path; agent/housekeeping schedules in-process functions' },
  { input: /(^|\/)node_modules\/pino\/lib\/transport\.js$/, why: 'pino transports (worker threads) are not used' },
  { input: /(^|\/)node_modules\/thread-stream\/index\.js$/, why: 'used only by pino transports, which are not used' },
  { input: /(^|\/)node_modules\/@grpc\/grpc-js\/build\/src\/(channelz|orca)\.js$/, why: 'protos loaded only when the channelz admin service or ORCA is registered, which svc never does' },
  { input: /(^|\/)node_modules\/etcd3\/lib\/connection-pool\.js$/, why: 'patched by etcd3ProtoPlugin to load /usr/lib/svc/etcd3/proto/rpc.proto (shipped)' },
];

/**
 * etcd3 loads `${__dirname}/../proto/rpc.proto` when it is required; in a bundle __dirname is
 * the bundle's directory, so the path is rewritten to etcd3/proto/ next to the bundle, where the
 * build copies etcd3's proto files. Fails loudly if an etcd3 upgrade changes the line.
 */
export const etcd3ProtoPlugin = {
  name: 'svc-etcd3-proto',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]etcd3[\\/]lib[\\/]connection-pool\.js$/ }, (args) => {
      const src = readFileSync(args.path, 'utf8');
      const from = '`${__dirname}/../proto/rpc.proto`';
      if (!src.includes(from)) throw new Error(`${args.path}: expected ${from}; etcd3 changed how it finds its proto, update packaging/lib/bundle.mjs`);
      return { contents: src.replace(from, '`${__dirname}/etcd3/proto/rpc.proto`'), loader: 'js' };
    });
  },
};

/** The files etcd3ProtoPlugin makes the bundle read: [source (repo-relative), destination (relative to the bundle dir)]. */
export function etcd3ProtoFiles(repoRoot) {
  const req = createRequire(join(repoRoot, 'package.json'));
  const dir = join(req.resolve('etcd3/package.json'), '..', 'proto');
  return ['rpc.proto', 'auth.proto', 'kv.proto'].map((f) => [join(dir, f), join('etcd3', 'proto', f)]);
}

/**
 * Bundles `entries` ({ in: 'agent/main.ts', out: 'svc-node' }) into outDir/<out>.js. Returns the
 * metafile inputs (repo-relative paths). Throws on esbuild errors, warnings, or an unlisted
 * runtime file lookup.
 */
export async function bundle({ repoRoot, outDir, entries, banner }) {
  const esbuild = createRequire(join(repoRoot, 'package.json'))('esbuild');
  const result = await esbuild.build({
    absWorkingDir: repoRoot,
    entryPoints: entries.map((e) => ({ in: e.in, out: e.out })),
    outdir: outDir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: externalModules,
    // Whitespace and syntax minification shrink the file; names are kept so stack traces and
    // logged error names stay readable.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: 'none',
    banner: { js: banner },
    metafile: true,
    logLevel: 'silent',
    plugins: [etcd3ProtoPlugin],
  });
  if (result.warnings.length) {
    const text = await esbuild.formatMessages(result.warnings, { kind: 'warning' });
    throw new Error(`esbuild warnings (treated as errors):\n${text.join('\n')}`);
  }
  const inputs = Object.keys(result.metafile.inputs);
  const unlisted = [];
  for (const input of inputs) {
    if (input.startsWith('<')) continue;
    const src = readFileSync(join(repoRoot, input), 'utf8');
    if (/\b(__dirname|__filename|require\.resolve)\b|import\.meta\.url/.test(src) && !runtimeLookups.some((l) => l.input.test(input))) unlisted.push(input);
  }
  if (unlisted.length) {
    throw new Error(
      `these bundled files look up files at run time, which a bundle breaks:\n  ${unlisted.join('\n  ')}\n` +
        'decide how the package serves them and list them in runtimeLookups (packaging/lib/bundle.mjs)',
    );
  }
  return inputs;
}
