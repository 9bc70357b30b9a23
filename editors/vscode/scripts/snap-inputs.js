#!/usr/bin/env node
// Keeps tests/snap/ in sync with the repository's real SCL files.
//
// vscode-tmgrammar-snap writes its .snap files beside its inputs, so the
// snapshot test runs on copies: tests/snap/examples/**/*.env.scl and
// tests/snap/stdlib/*.env.scl mirror examples/ and stdlib/ at the repository
// root.
//
//   node scripts/snap-inputs.js --check    (default) fails when a copy differs
//                                          from its original, an original has no
//                                          copy, a copy has no original, or a
//                                          copy has no committed .snap
//   node scripts/snap-inputs.js --update   rewrites the copies (and removes stale
//                                          ones with their .snap); `npm run
//                                          snap:update` runs it and then rewrites
//                                          the .snap files: review their diff
'use strict';
const fs = require('fs');
const path = require('path');

const extDir = path.resolve(__dirname, '..');
const repoRoot = path.resolve(extDir, '..', '..');
const snapDir = path.join(extDir, 'tests', 'snap');
// [folder under the repository root, recursive?]
const SOURCES = [
  ['examples', true],
  ['stdlib', false],
];
const SUFFIX = '.env.scl';

function walk(dir, recursive) {
  if (!fs.existsSync(dir)) return [];
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (recursive) out.push(...walk(full, true));
    } else if (entry.isFile() && entry.name.endsWith(SUFFIX)) {
      out.push(full);
    }
  }
  return out.sort();
}

function originals() {
  const rels = [];
  for (const [folder, recursive] of SOURCES) {
    for (const file of walk(path.join(repoRoot, folder), recursive)) {
      rels.push(path.relative(repoRoot, file));
    }
  }
  return rels;
}

function copies() {
  return walk(snapDir, true).map((file) => path.relative(snapDir, file));
}

function check() {
  const problems = [];
  const orig = originals();
  if (orig.length === 0) problems.push(`no ${SUFFIX} files found under ${repoRoot}/{examples,stdlib}`);
  const origSet = new Set(orig);
  for (const rel of orig) {
    const copy = path.join(snapDir, rel);
    if (!fs.existsSync(copy)) {
      problems.push(`missing copy: tests/snap/${rel} (of ${rel})`);
      continue;
    }
    if (!fs.readFileSync(copy).equals(fs.readFileSync(path.join(repoRoot, rel)))) {
      problems.push(`stale copy: tests/snap/${rel} differs from ${rel}`);
    }
    if (!fs.existsSync(copy + '.snap')) {
      problems.push(`missing snapshot: tests/snap/${rel}.snap`);
    }
  }
  for (const rel of copies()) {
    if (!origSet.has(rel)) problems.push(`copy without an original: tests/snap/${rel}`);
  }
  if (problems.length > 0) {
    for (const p of problems) console.error(p);
    console.error(
      'tests/snap/ is out of sync with the repository: run `npm run snap:update` ' +
        '(copies the files, then rewrites the .snap files) and review the .snap diff.',
    );
    process.exit(1);
  }
  console.log(`tests/snap/: ${orig.length} copies match examples/ and stdlib/, each with a .snap`);
}

function update() {
  const orig = originals();
  const origSet = new Set(orig);
  for (const rel of copies()) {
    if (!origSet.has(rel)) {
      fs.rmSync(path.join(snapDir, rel));
      fs.rmSync(path.join(snapDir, rel + '.snap'), { force: true });
      console.log(`removed tests/snap/${rel}`);
    }
  }
  for (const rel of orig) {
    const copy = path.join(snapDir, rel);
    fs.mkdirSync(path.dirname(copy), { recursive: true });
    fs.copyFileSync(path.join(repoRoot, rel), copy);
  }
  console.log(`tests/snap/: copied ${orig.length} files`);
}

const mode = process.argv[2] || '--check';
if (mode === '--check') check();
else if (mode === '--update') update();
else {
  console.error('usage: node scripts/snap-inputs.js [--check | --update]');
  process.exit(2);
}
