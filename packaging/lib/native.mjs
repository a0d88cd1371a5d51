/**
 * The native modules the bundles load with require(): copied from the build's node_modules (so
 * they are compiled for this machine's architecture and Node.js ABI) into
 * /usr/lib/svc/node_modules with only the files they need at run time, .node files stripped.
 * Every package's runtime dependencies must be in the list too; the build checks that.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

/** Package name -> the paths (files, or directories copied for their *.js) it needs at run time. */
export const nativeFiles = {
  'better-sqlite3': ['package.json', 'lib', 'build/Release/better_sqlite3.node'],
  'sd-notify': ['package.json', 'index.js', 'build/Release/notify.node'],
  // Both addons find their .node file through `bindings`, which needs file-uri-to-path.
  bindings: ['package.json', 'bindings.js'],
  'file-uri-to-path': ['package.json', 'index.js'],
};

function jsFilesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...jsFilesUnder(p));
    else if (name.endsWith('.js')) out.push(p);
  }
  return out;
}

/**
 * Debian policy 10.2 wants every shared object linked against libc. An addon that calls nothing
 * from libc itself (sd-notify's calls only libsystemd) loses libc.so.6 from DT_NEEDED to the
 * linker's --as-needed; adding it back changes nothing at run time (node has libc loaded) and
 * states the dependency honestly. Needs patchelf.
 */
function linkLibc(file) {
  const needed = execFileSync('patchelf', ['--print-needed', file], { encoding: 'utf8' }).split('\n');
  if (!needed.includes('libc.so.6')) execFileSync('patchelf', ['--add-needed', 'libc.so.6', file]);
}

/** The directory of an installed npm package, resolved the way the build's own require would. */
export function packageDir(repoRoot, name) {
  return dirname(createRequire(join(repoRoot, 'package.json')).resolve(`${name}/package.json`));
}

/**
 * Copies the native modules into `destNodeModules`; returns [{ name, version, dir (repo-relative) }].
 * Throws if a file is missing or a runtime dependency is not in `nativeFiles`.
 */
export function copyNativeModules(repoRoot, destNodeModules) {
  const copied = [];
  for (const [name, paths] of Object.entries(nativeFiles)) {
    const src = packageDir(repoRoot, name);
    const pkg = JSON.parse(readFileSync(join(src, 'package.json'), 'utf8'));
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      // Install-time helpers of better-sqlite3 (prebuilt download) are not needed at run time.
      if (name === 'better-sqlite3' && dep === 'prebuild-install') continue;
      if (!(dep in nativeFiles)) throw new Error(`${name} depends on ${dep}, which packaging/lib/native.mjs does not ship`);
    }
    for (const p of paths) {
      const from = join(src, p);
      const files = statSync(from).isDirectory() ? jsFilesUnder(from) : [from];
      for (const f of files) {
        const to = join(destNodeModules, name, relative(src, f));
        mkdirSync(dirname(to), { recursive: true });
        copyFileSync(f, to);
        if (f.endsWith('.node')) {
          // Debug symbols and build notes are not needed; strip like dh_strip does for libraries.
          execFileSync('strip', ['--strip-unneeded', '--remove-section=.comment', '--remove-section=.note', to]);
          linkLibc(to);
        }
        chmodSync(to, 0o644);
      }
    }
    copied.push({ name, version: pkg.version, dir: relative(repoRoot, src) });
  }
  return copied;
}
