#!/usr/bin/env node
// Checks a packaged .vsix: it holds the files the manifest points to, no
// sources, tests or dev dependencies, and its out/extension.js loads (with a
// stand-in for the `vscode` module, which only VS Code provides) using only the
// node_modules shipped in the package.
//
//   node scripts/check-vsix.js path/to/scl-X.Y.Z.vsix
// Needs `unzip`.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const Module = require('module');
const { execFileSync } = require('child_process');

const vsix = process.argv[2];
if (!vsix || !fs.existsSync(vsix)) {
  console.error('usage: node scripts/check-vsix.js FILE.vsix');
  process.exit(2);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scl-vsix-'));
const problems = [];
try {
  execFileSync('unzip', ['-q', path.resolve(vsix), '-d', dir]);
  const ext = path.join(dir, 'extension');
  const manifest = JSON.parse(fs.readFileSync(path.join(ext, 'package.json'), 'utf8'));
  const required = [
    manifest.main,
    ...manifest.contributes.grammars.map((g) => g.path),
    ...manifest.contributes.snippets.map((s) => s.path),
    ...manifest.contributes.languages.map((l) => l.configuration),
  ];
  for (const file of required) {
    if (!fs.existsSync(path.join(ext, file))) problems.push(`missing: ${file}`);
  }
  // vsce stores README.md as readme.md and LICENSE as LICENSE.txt.
  const top = fs.readdirSync(ext).map((name) => name.toLowerCase());
  if (!top.includes('readme.md')) problems.push('missing: README.md');
  if (!top.some((name) => name === 'license' || name === 'license.txt')) problems.push('missing: LICENSE');
  for (const file of ['src', 'tests', 'scripts', 'tsconfig.json']) {
    if (fs.existsSync(path.join(ext, file))) problems.push(`should not be packaged: ${file}`);
  }
  for (const dep of Object.keys(manifest.devDependencies || {})) {
    if (fs.existsSync(path.join(ext, 'node_modules', dep))) problems.push(`dev dependency packaged: node_modules/${dep}`);
  }
  for (const dep of Object.keys(manifest.dependencies || {})) {
    if (!fs.existsSync(path.join(ext, 'node_modules', dep))) problems.push(`dependency not packaged: node_modules/${dep}`);
  }

  // Load the entry point. `vscode` is a stand-in: any property is a callable,
  // constructible stub (classes extend vscode.CompletionItem etc. at load time).
  const stub = new Proxy(function () {}, {
    get: (target, prop) => (prop === 'prototype' ? target.prototype : prop === '__esModule' ? false : stub),
    apply: () => stub,
    construct: () => ({}),
  });
  const resolve = Module._resolveFilename;
  const outside = [];
  Module._resolveFilename = function (request, parent, ...rest) {
    if (request === 'vscode') return 'vscode';
    const resolved = resolve.call(this, request, parent, ...rest);
    if (path.isAbsolute(resolved) && !resolved.startsWith(ext + path.sep)) outside.push(`${request} -> ${resolved}`);
    return resolved;
  };
  require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: stub };
  try {
    const entry = require(path.join(ext, manifest.main));
    for (const fn of ['activate', 'deactivate']) {
      if (typeof entry[fn] !== 'function') problems.push(`${manifest.main} does not export ${fn}()`);
    }
  } catch (error) {
    problems.push(`${manifest.main} does not load: ${error && error.stack ? error.stack : error}`);
  } finally {
    Module._resolveFilename = resolve;
  }
  // Built-in modules resolve to their names, so anything absolute and outside the package leaked in.
  for (const o of outside) problems.push(`resolved outside the package: ${o}`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
if (problems.length > 0) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`${vsix}: contents ok; its main module loads with the packaged node_modules only`);
