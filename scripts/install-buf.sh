#!/usr/bin/env bash
# Installs the pinned `buf` (protobuf linter) for `make lint` into .venv/tools/buf, from the npm
# registry's @bufbuild/buf package (its platform package ships the binary). Idempotent: does nothing
# when the pinned version is already there. Prints the path of the binary.
set -euo pipefail
BUF_VERSION="1.75.0"   # keep in step with the note in requirements-dev.lock
cd "$(dirname "$0")/.."
prefix=".venv/tools/buf"
bin="$prefix/node_modules/.bin/buf"
if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "$BUF_VERSION" ]; then
  echo "$bin"; exit 0
fi
command -v npm >/dev/null || { echo "install-buf: npm is needed (apt-get install -y npm)" >&2; exit 1; }
mkdir -p "$prefix"
npm install --silent --no-audit --no-fund --no-save --prefix "$prefix" "@bufbuild/buf@$BUF_VERSION" >&2
"$bin" --version >/dev/null
echo "$bin"
