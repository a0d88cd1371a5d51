#!/usr/bin/env node
/**
 * `npm run package`: builds the Debian package of svc from this checkout (after `npm ci`; no tsc
 * build needed, the bundles are made from the TypeScript sources). Layout, maintainer scripts and
 * the reasons behind them: packaging/README.md.
 *
 * Usage: node packaging/build-deb.mjs [--out DIR] [--keep-stage]
 *   --out DIR     where the .deb goes (default dist-deb/); its last output line is the .deb path
 *   --keep-stage  keep the staged tree (DIR/stage) for inspection
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { bundle, etcd3ProtoFiles } from './lib/bundle.mjs';
import { readTopEntry } from './lib/changelog.mjs';
import { packageDirsOf, renderCopyright } from './lib/copyright.mjs';
import { renderManPage } from './lib/man.mjs';
import { copyNativeModules, packageDir } from './lib/native.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');

function parseArgs(argv) {
  const opts = { out: join(repoRoot, 'dist-deb'), keepStage: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') opts.out = resolve(argv[++i] ?? '');
    else if (a.startsWith('--out=')) opts.out = resolve(a.slice('--out='.length));
    else if (a === '--keep-stage') opts.keepStage = true;
    else throw new Error(`unknown argument ${JSON.stringify(a)} (usage: build-deb.mjs [--out DIR] [--keep-stage])`);
  }
  return opts;
}

const log = (msg) => process.stderr.write(`package: ${msg}\n`);

/** Writes a file (creating its directory) with the given mode. */
function put(stage, path, content, mode = 0o644) {
  const to = join(stage, path);
  mkdirSync(dirname(to), { recursive: true });
  writeFileSync(to, content);
  chmodSync(to, mode);
}

/** Copies a repository file into the stage. */
function copy(stage, from, path, mode = 0o644) {
  put(stage, path, readFileSync(join(repoRoot, from)), mode);
}

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    out.push(p);
    if (lstatSync(p).isDirectory()) out.push(...walk(p));
  }
  return out;
}

/** Depends from the sonames the .node files link to, via dpkg-shlibdeps (run in a scratch source tree). */
function sharedLibraryDepends(scratch, files) {
  mkdirSync(join(scratch, 'debian'), { recursive: true });
  writeFileSync(join(scratch, 'debian', 'control'), 'Source: svc\n\nPackage: svc\nArchitecture: any\n');
  // Symbols resolved by the node binary itself (V8, libuv, N-API) are reported as warnings; they are expected.
  const out = execFileSync('dpkg-shlibdeps', ['-O', '--warnings=0', ...files.map((f) => `-e${f}`)], { cwd: scratch, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const m = /^shlibs:Depends=(.*)$/m.exec(out);
  if (!m) throw new Error(`dpkg-shlibdeps printed no shlibs:Depends:\n${out}`);
  return m[1].split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * Node.js versions the package accepts: at least package.json's engines minimum (>= 20.19:
 * require() of ES modules, which the unbundled tree needs for jose, and the version everything is
 * tested on), and the same major version as the Node.js that compiled the native modules, since
 * better-sqlite3 and sd-notify are built against that major's ABI (NODE_MODULE_VERSION).
 */
function nodejsDepends(pkgJson) {
  const m = /^>=\s*(\d+)\.(\d+)(?:\.(\d+))?$/.exec(pkgJson.engines?.node ?? '');
  if (!m) throw new Error(`package.json engines.node must be ">=X.Y" (got ${JSON.stringify(pkgJson.engines?.node)})`);
  const [major] = process.versions.node.split('.').map(Number);
  const min = Number(m[1]) === major ? `${m[1]}.${m[2]}${m[3] ? '.' + m[3] : ''}` : `${major}`;
  if (major < Number(m[1])) throw new Error(`building with Node.js ${process.versions.node}, older than engines ${pkgJson.engines.node}`);
  return [`nodejs (>= ${min})`, `nodejs (<< ${major + 1})`];
}

const launcher = (name, bundleFile) => `#!/bin/sh
# ${name}: runs the bundled program with the system's Node.js (package svc).
here=$(dirname "$(readlink -f "$0")")
exec /usr/bin/node "$here/../lib/svc/${bundleFile}" "$@"
`;

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const pkgJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  const changelog = readTopEntry(join(here, 'debian', 'changelog'));
  if (changelog.upstream !== pkgJson.version) {
    throw new Error(`packaging/debian/changelog is at ${changelog.version} but package.json says ${pkgJson.version}: add a changelog entry for ${pkgJson.version}-1`);
  }
  const version = changelog.version;
  const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
  const stage = join(opts.out, 'stage');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  const lib = 'usr/lib/svc';

  log(`bundling svc ${version} for ${arch}`);
  const inputs = await bundle({
    repoRoot,
    outDir: join(stage, lib),
    entries: [
      { in: 'agent/main.ts', out: 'svc-node' },
      { in: 'apiserver/main.ts', out: 'svc-apiserver' },
      // svc-node runs it as a child process to make certificates (agent/platform/x509-process.ts looks next to itself).
      { in: 'agent/platform/x509-child.ts', out: 'x509-child' },
    ],
    banner: `/* svc ${version}: bundled by packaging/build-deb.mjs from the svc sources and the npm packages listed in /usr/share/doc/svc/copyright. */`,
  });
  for (const f of ['svc-node.js', 'svc-apiserver.js', 'x509-child.js']) chmodSync(join(stage, lib, f), 0o644);
  // Read by agentVersion(), which walks up from the bundle; "type" keeps the bundles CommonJS.
  put(stage, `${lib}/package.json`, JSON.stringify({ name: pkgJson.name, version: pkgJson.version, private: true, type: 'commonjs' }, null, 2) + '\n');
  // Proto files loaded at run time: the CRI proto (found by walking up from the bundle) and etcd3's.
  for (const f of walk(join(repoRoot, 'proto')).filter((p) => p.endsWith('.proto'))) copy(stage, relative(repoRoot, f), `${lib}/${relative(repoRoot, f)}`);
  for (const [from, to] of etcd3ProtoFiles(repoRoot)) put(stage, `${lib}/${to}`, readFileSync(from));

  log('copying native modules');
  const natives = copyNativeModules(repoRoot, join(stage, lib, 'node_modules'));
  // Fail here, not on a node: the shipped modules must load from where the bundles look.
  execFileSync(
    process.execPath,
    [
      '-e',
      `const r = require('module').createRequire(${JSON.stringify(join(stage, lib, 'svc-node.js'))});
       const db = new (r('better-sqlite3'))(':memory:');
       if (db.prepare('select 41 + 1 as n').get().n !== 42) throw new Error('better-sqlite3 broken');
       if (typeof r('sd-notify').sendState !== 'function') throw new Error('sd-notify broken');`,
    ],
    { stdio: 'inherit' },
  );

  put(stage, 'usr/bin/svc-node', launcher('svc-node', 'svc-node.js'), 0o755);
  put(stage, 'usr/bin/svc-apiserver', launcher('svc-apiserver', 'svc-apiserver.js'), 0o755);

  // systemd integration.
  copy(stage, 'systemd/svc-node.service', 'lib/systemd/system/svc-node.service');
  copy(stage, 'systemd/svc-apiserver.service', 'lib/systemd/system/svc-apiserver.service');
  copy(stage, 'systemd/tmpfiles.d/svc.conf', 'usr/lib/tmpfiles.d/svc.conf');
  copy(stage, 'systemd/sysusers.d/svc.conf', 'usr/lib/sysusers.d/svc.conf');

  // Configuration (conffiles).
  log('generating /etc/svc/node.yaml from the configuration schema');
  const scratch = join(opts.out, 'scratch');
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const esbuild = createRequire(join(repoRoot, 'package.json'))('esbuild');
  const genOut = join(scratch, 'default-node-config.cjs');
  await esbuild.build({ absWorkingDir: repoRoot, entryPoints: ['packaging/tools/default-node-config.ts'], outfile: genOut, bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'error' });
  put(stage, 'etc/svc/node.yaml', execFileSync(process.execPath, [genOut], { encoding: 'utf8' }));
  copy(stage, 'systemd/etc-svc/node.conf.d/README', 'etc/svc/node.conf.d/README');
  copy(stage, 'systemd/default/svc-node', 'etc/default/svc-node');
  copy(stage, 'systemd/default/svc-apiserver', 'etc/default/svc-apiserver');
  const conffiles = ['/etc/default/svc-apiserver', '/etc/default/svc-node', '/etc/svc/node.conf.d/README', '/etc/svc/node.yaml'];

  // Reference seccomp profiles in the agent's seccomp directory (not conffiles: see seccomp/README.md).
  for (const f of readdirSync(join(repoRoot, 'seccomp')).filter((n) => n.endsWith('.json')).sort()) {
    JSON.parse(readFileSync(join(repoRoot, 'seccomp', f), 'utf8'));
    copy(stage, `seccomp/${f}`, `var/lib/svc-node/seccomp/${f}`);
  }

  // Documentation.
  log('writing man pages, copyright and changelog');
  const date = new Date(changelog.epochSeconds * 1000).toISOString().slice(0, 10);
  const helpOf = (bundleFile) => execFileSync(process.execPath, [join(stage, lib, bundleFile), '--help'], { encoding: 'utf8' });
  const manCommon = { section: '8', date, source: `svc ${pkgJson.version}`, manual: 'System Administration' };
  const pages = {
    'svc-node': renderManPage({
      ...manCommon,
      name: 'svc-node',
      summary: 'node agent of svc',
      help: helpOf('svc-node.js'),
      files: [
        { path: '/etc/svc/node.yaml', text: 'Configuration file (--config) used by svc-node.service; every field commented out at its default.' },
        { path: '/etc/svc/node.conf.d/', text: 'Drop-in directory (--config-dir): *.conf files merged onto node.yaml in lexical order.' },
        { path: '/etc/svc/node.kubeconfig', text: 'The node\'s identity and API server address (--kubeconfig); written by TLS bootstrap.' },
        { path: '/etc/svc/bootstrap.kubeconfig', text: 'Bootstrap token credentials (--bootstrap-kubeconfig) used to obtain the node\'s certificate.' },
        { path: '/etc/default/svc-node', text: 'Extra flags for the unit (SVC_NODE_ARGS).' },
        { path: '/var/lib/svc-node/', text: 'State directory (--root-dir): certificates in pki/, checkpoints, device plugin and pod resources sockets.' },
        { path: '/var/lib/svc-node/seccomp/', text: 'Seccomp profiles for Localhost profiles; audit.json and example-deny-dangerous.json ship with the package.' },
        { path: '/var/run/svc-node.lock', text: 'Lock file (--lock-file) that keeps a second agent from starting.' },
      ],
      seeAlso: ['svc-apiserver(8)', 'systemctl(1)', 'journalctl(1)'],
    }),
    'svc-apiserver': renderManPage({
      ...manCommon,
      name: 'svc-apiserver',
      summary: 'compact API server of svc',
      help: helpOf('svc-apiserver.js'),
      files: [
        { path: '/etc/default/svc-apiserver', text: 'Flags for the unit (SVC_APISERVER_ARGS).' },
        { path: '/var/lib/svc-apiserver/', text: 'Data directory (--data-dir): the SQLite store, the generated CA and serving certificate in pki/, and admin.kubeconfig.' },
      ],
      seeAlso: ['svc-node(8)', 'systemctl(1)', 'journalctl(1)'],
    }),
  };
  for (const [name, text] of Object.entries(pages)) put(stage, `usr/share/man/man8/${name}.8.gz`, gzipSync(text, { level: 9 }));

  const bundledDirs = packageDirsOf(inputs);
  put(
    stage,
    'usr/share/doc/svc/copyright',
    renderCopyright({
      repoRoot,
      licenseDir: join(here, 'debian', 'licenses'),
      project: { name: pkgJson.name, license: pkgJson.license, source: 'the svc repository', copyright: 'the svc authors' },
      bundled: [
        ...bundledDirs.map((dir) => ({ dir, shippedAs: 'bundled into /usr/lib/svc/*.js' })),
        ...natives.map((n) => ({ dir: n.dir, shippedAs: `shipped in /usr/lib/svc/node_modules/${n.name}` })),
      ],
      extra: [
        {
          files: `${relative(repoRoot, packageDir(repoRoot, 'better-sqlite3'))}/deps/*`,
          copyright: ['none: the SQLite authors disclaim copyright (public domain)'],
          license: 'public-domain',
          comment: 'SQLite, compiled into better_sqlite3.node.',
        },
      ],
      extraLicenses: [{ name: 'public-domain', file: 'public-domain-sqlite' }],
    }),
  );
  put(stage, 'usr/share/doc/svc/changelog.Debian.gz', gzipSync(changelog.text, { level: 9 }));
  // Each override is explained in the file and in packaging/README.md.
  copy(stage, 'packaging/debian/lintian-overrides', `usr/share/lintian/overrides/${changelog.source}`);
  // The units' Documentation= points here.
  copy(stage, 'docs/install.md', 'usr/share/doc/svc/install.md');

  // Control area.
  const natFiles = natives.flatMap((n) => walk(join(stage, lib, 'node_modules', n.name)).filter((p) => p.endsWith('.node')));
  const depends = [
    ...nodejsDepends(pkgJson),
    ...sharedLibraryDepends(scratch, natFiles),
    // postinst runs systemd-sysusers and systemd-tmpfiles.
    'systemd | systemd-standalone-sysusers | systemd-sysusers',
    'systemd | systemd-standalone-tmpfiles | systemd-tmpfiles',
  ];
  let installedKiB = 0;
  for (const p of walk(stage)) {
    const st = lstatSync(p);
    installedKiB += st.isFile() ? Math.ceil(st.size / 1024) : 1;
  }
  const control = [
    `Package: ${changelog.source}`,
    `Version: ${version}`,
    `Architecture: ${arch}`,
    `Maintainer: ${changelog.maintainer}`,
    `Installed-Size: ${installedKiB}`,
    `Depends: ${depends.join(', ')}`,
    'Recommends: containerd',
    'Suggests: etcd-server',
    'Section: admin',
    'Priority: optional',
    'Description: node agent and compact API server for small clusters',
    ' svc-node registers the machine as a node with an API server, keeps its',
    ' status and Lease fresh, and runs the pods bound to it through a CRI',
    ' container runtime such as containerd. svc-apiserver is a compact API server',
    ' that stores its objects in an embedded SQLite database or in etcd.',
    ' .',
    ' Both run as systemd services: svc-node is enabled and starts once the node',
    ' has a kubeconfig or a bootstrap kubeconfig in /etc/svc; svc-apiserver is',
    ' enabled by the administrator on the control-plane machine.',
    '',
  ].join('\n');
  const debian = join(stage, 'DEBIAN');
  put(stage, 'DEBIAN/control', control);
  put(stage, 'DEBIAN/conffiles', conffiles.join('\n') + '\n');
  for (const s of ['postinst', 'prerm', 'postrm']) put(stage, `DEBIAN/${s}`, readFileSync(join(here, 'debian', s)), 0o755);
  const sums = walk(stage)
    .filter((p) => !p.startsWith(debian + '/') && p !== debian && lstatSync(p).isFile() && !conffiles.includes('/' + relative(stage, p)))
    .map((p) => `${createHash('md5').update(readFileSync(p)).digest('hex')}  ${relative(stage, p)}`);
  put(stage, 'DEBIAN/md5sums', sums.join('\n') + '\n');

  // Directories 0755 (dpkg unpacks them so; postinst tightens the state directories), and one
  // timestamp for everything so the same sources give the same package.
  for (const p of [stage, ...walk(stage)]) {
    if (statSync(p).isDirectory()) chmodSync(p, 0o755);
    utimesSync(p, changelog.epochSeconds, changelog.epochSeconds);
  }

  const deb = join(opts.out, `${changelog.source}_${version}_${arch}.deb`);
  rmSync(deb, { force: true });
  log(`building ${relative(process.cwd(), deb) || deb}`);
  execFileSync('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', stage, deb], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, SOURCE_DATE_EPOCH: String(changelog.epochSeconds) },
  });
  rmSync(scratch, { recursive: true, force: true });
  if (!opts.keepStage) rmSync(stage, { recursive: true, force: true });
  process.stdout.write(deb + '\n');
}

main().catch((e) => {
  process.stderr.write(`package: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
