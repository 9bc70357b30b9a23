// Unit tests of the preview's text (out/lowered-protocol.js, compiled by tsc).
// Run: npx tsc -p . && node --test tests/
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { renderLowered, renderMessage, previewLanguage } = require('../out/lowered-protocol.js');

const dockerResult = {
  env: 'bert_train',
  target: 'docker',
  targets: ['docker', 'apptainer', 'conda', 'k8s', 'trainjob', 'compose'],
  artifacts: [
    { path: 'Dockerfile', text: 'FROM debian:12.5\nRUN true\n' },
    { path: '.dockerignore', text: '*\n!requirements.txt\n' },
  ],
  diagnostics: [{ severity: 'warning', code: 'W0401', message: 'first line\nsecond line' }],
};

test('artifacts under header lines, diagnostics on top', () => {
  assert.equal(
    renderLowered(dockerResult, 'train.env.scl'),
    [
      '# env bert_train of train.env.scl, lowered for target docker',
      '# warning[W0401]: first line',
      '#   second line',
      '',
      '# ── Dockerfile ──',
      'FROM debian:12.5',
      'RUN true',
      '',
      '# ── .dockerignore ──',
      '*',
      '!requirements.txt',
      '',
    ].join('\n'),
  );
});

test('a file without envs', () => {
  const text = renderLowered({ ...dockerResult, env: null, artifacts: [], diagnostics: [] }, 'lib.env.scl');
  assert.equal(text, '# lib.env.scl declares no env (target docker)\n');
});

test('an env the target writes nothing for', () => {
  const text = renderLowered({ ...dockerResult, artifacts: [], diagnostics: [] }, 'a.env.scl');
  assert.match(text, /writes no files/);
});

test('messages are comment lines', () => {
  assert.equal(renderMessage('failed:\nnot running'), '# failed:\n# not running\n');
});

test('preview language', () => {
  assert.equal(previewLanguage(dockerResult.artifacts), 'dockerfile');
  assert.equal(previewLanguage([{ path: 'job.yaml', text: '' }, { path: 'svc.yml', text: '' }]), 'yaml');
  assert.equal(previewLanguage([{ path: 'Dockerfile', text: '' }, { path: 'job.yaml', text: '' }]), 'plaintext');
  assert.equal(previewLanguage([{ path: 'apptainer.def', text: '' }]), 'plaintext');
  assert.equal(previewLanguage([]), 'plaintext');
});
