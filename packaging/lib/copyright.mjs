/**
 * /usr/share/doc/svc/copyright in the machine-readable format (DEP-5): svc itself, every npm
 * package esbuild put into the bundles (found from its metafile), the native modules shipped
 * beside them, and SQLite inside better-sqlite3. Holders come from each package's own license
 * file; the build fails on a license it has no text for, so nothing ships unaccounted for.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** npm license expression -> DEP-5 short name, and where its text comes from. */
const licenses = {
  MIT: { dep5: 'Expat', file: 'Expat' },
  ISC: { dep5: 'ISC', file: 'ISC' },
  '0BSD': { dep5: '0BSD', file: '0BSD' },
  'BSD-3-Clause': { dep5: 'BSD-3-clause', file: 'BSD-3-clause' },
  'Apache-2.0': { dep5: 'Apache-2.0', common: '/usr/share/common-licenses/Apache-2.0' },
};

/** The package directories (relative to the repository, e.g. node_modules/@grpc/grpc-js) of the given input files. */
export function packageDirsOf(inputPaths) {
  const dirs = new Set();
  for (const p of inputPaths) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(p);
    if (m) dirs.add(m[1]);
  }
  return [...dirs].sort();
}

/**
 * A build-tree path as the copyright file shows it: from its first node_modules/ on, so the file
 * does not depend on where the build tree's node_modules really lives (it may be a symlink to a
 * shared install, which esbuild and realpath resolve to ../../somewhere/node_modules/...).
 */
export function shownPath(p) {
  const i = p.indexOf('node_modules/');
  return i > 0 ? p.slice(i) : p;
}

/** The package.json author as text, or undefined. */
function authorOf(pkg) {
  return typeof pkg.author === 'string' ? pkg.author : pkg.author?.name;
}

/**
 * Copyright holders of a package: the notices of its license/notice files ("Copyright (c) 2020
 * Name"), else its package.json author. License body text that merely mentions copyright (the
 * Apache-2.0 terms, "[yyyy] [name of copyright owner]" templates) is not a notice.
 */
function holdersOf(dir, pkg) {
  const found = [];
  const author = authorOf(pkg);
  for (const name of readdirSync(dir).filter((f) => /^(licen[cs]e|copying|notice|copyrightnotice)(\.(md|txt))?$/i.test(f)).sort()) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      const t = line.trim().replace(/^[#*>/\s]+/, '');
      const m = /^(?:copyright\s*(?:\(c\)|©)?|\(c\)|©)\s*(.*)$/i.exec(t);
      if (!m) continue;
      let holder = m[1].replace(/&lt;/g, '<').replace(/&gt;?/g, '>').replace(/&amp;/g, '&').replace(/^(\(c\)|©)\s*/i, '').replace(/\s+/g, ' ').replace(/[.,;]$/, '').trim();
      if (!/^\d{4}/.test(holder) && !/^[A-Z]/.test(holder)) continue;
      if (/\[yyyy\]|\b(license|licensor|notice|owner|statement|retain|holders?)\b/i.test(holder)) continue;
      // "Copyright (c) 2020" with the name left out: the author is the best available name.
      if (!/[A-Za-z]/.test(holder) && author) holder = `${holder} ${author}`;
      if (holder && !found.includes(holder)) found.push(holder);
    }
  }
  if (found.length) return found;
  return [author ?? `the ${pkg.name} authors`];
}

function licenseOf(pkg, where) {
  const id = typeof pkg.license === 'string' ? pkg.license : pkg.license?.type;
  // SPDX conjunctions such as "(Apache-2.0 AND BSD-3-Clause)": every part applies; DEP-5 writes "and".
  const ids = String(id ?? '').replace(/^\((.*)\)$/, '$1').split(/\s+AND\s+/);
  for (const part of ids) {
    if (!licenses[part]) {
      throw new Error(`${where}: license ${JSON.stringify(id)} has no text in packaging/debian/licenses; add it to packaging/lib/copyright.mjs before shipping this package`);
    }
  }
  return { ids, dep5: ids.map((part) => licenses[part].dep5).join(' and ') };
}

const indent = (text) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => (l.trim() === '' ? ' .' : ' ' + l))
    .join('\n');

/**
 * Builds the copyright file. `opts`: { repoRoot, licenseDir, project: {name, license, source},
 * bundled: { dir, shippedAs }[] (package dirs relative to repoRoot and where they end up),
 * extra: paragraphs to add verbatim ({files, copyright[], license, comment}) }.
 */
export function renderCopyright(opts) {
  const paragraphs = [];
  const used = new Set();
  paragraphs.push(
    [
      'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
      `Upstream-Name: ${opts.project.name}`,
      `Source: ${opts.project.source}`,
      'Comment: The programs are shipped as two esbuild bundles,',
      ' /usr/lib/svc/svc-node.js and /usr/lib/svc/svc-apiserver.js, that contain svc',
      ' and the npm packages listed below; native modules are shipped beside them in',
      ' /usr/lib/svc/node_modules. Paths in Files: are those of the build tree (the',
      ' repository after npm ci).',
    ].join('\n'),
  );
  const own = licenses[opts.project.license];
  if (!own) throw new Error(`project license ${opts.project.license} is not known to packaging/lib/copyright.mjs`);
  used.add(opts.project.license);
  paragraphs.push(['Files: *', `Copyright: ${opts.project.copyright}`, `License: ${own.dep5}`].join('\n'));

  for (const { dir, shippedAs } of opts.bundled) {
    const pkg = JSON.parse(readFileSync(join(opts.repoRoot, dir, 'package.json'), 'utf8'));
    const lic = licenseOf(pkg, dir);
    for (const part of lic.ids) used.add(part);
    const holders = holdersOf(join(opts.repoRoot, dir), pkg);
    paragraphs.push(
      [
        `Files: ${shownPath(dir)}/*`,
        `Copyright: ${holders.join('\n ')}`,
        `License: ${lic.dep5}`,
        `Comment: ${pkg.name} ${pkg.version}, ${shippedAs}.`,
      ].join('\n'),
    );
  }
  for (const p of opts.extra ?? []) {
    paragraphs.push([`Files: ${shownPath(p.files)}`, `Copyright: ${p.copyright.join('\n ')}`, `License: ${p.license}`, p.comment ? `Comment: ${p.comment}` : ''].filter(Boolean).join('\n'));
  }

  for (const id of [...used].sort()) {
    const l = licenses[id];
    if (l.common) {
      paragraphs.push(`License: ${l.dep5}\n On Debian systems, the full text of the ${l.dep5} license can be found in\n ${l.common}.`);
    } else {
      const path = join(opts.licenseDir, l.file);
      if (!existsSync(path)) throw new Error(`missing license text ${path}`);
      paragraphs.push(`License: ${l.dep5}\n${indent(readFileSync(path, 'utf8'))}`);
    }
  }
  for (const p of opts.extraLicenses ?? []) paragraphs.push(`License: ${p.name}\n${indent(readFileSync(join(opts.licenseDir, p.file), 'utf8'))}`);
  return paragraphs.join('\n\n') + '\n';
}
