#!/usr/bin/env bash
# Builds, tests and packages the VS Code extension (editors/vscode):
#   npm ci (from the committed package-lock.json), tsc, the TextMate grammar's
#   assertion tests (tests/grammar) and snapshot tests (tests/snap: copies of
#   examples/ and stdlib/, checked against the originals), the unit tests of
#   the preview's text, then vsce package and a check that the .vsix holds what
#   the manifest needs and that its main module loads.
# Writes target/vscode/scl-VERSION.vsix. Needs node >= 20, npm, unzip and the
# npm registry (nothing else from the network; VS Code itself is not needed).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/vscode"

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "node $(node --version) is too old: @vscode/vsce 3 needs node >= 20" >&2
  exit 1
fi

cd editors/vscode
echo "-- npm ci"
npm ci --no-audit --no-fund
echo "-- tsc"
npx --no-install tsc -p .
echo "-- TextMate grammar: assertions (tests/grammar)"
npm run --silent test:grammar
echo "-- TextMate grammar: snapshots of examples/ and stdlib/ (tests/snap)"
npm run --silent test:snap
echo "-- unit tests"
npm run --silent test:unit
echo "-- vsce package"
version=$(node -p 'require("./package.json").version')
vsix="$out/scl-$version.vsix"
mkdir -p "$out"
rm -f "$vsix"
npx --no-install vsce package --out "$vsix"
node scripts/check-vsix.js "$vsix"
echo "vsix: $vsix ($(wc -c < "$vsix") bytes)"
