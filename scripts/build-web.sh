#!/usr/bin/env bash
# Builds the browser client (web/) into web/dist: `npm ci` from web/package-lock.json (again only
# when the lock changed since the last one), then `npm run build` = buf generate (the message types
# from protos/, into web/src/gen) + tsc --noEmit + vite build. Used by `make web`, by `make run`
# when web/dist is missing and by the browser test. Needs Node.js 20+ with npm.
set -euo pipefail
cd "$(dirname "$0")/../web"
command -v npm >/dev/null || { echo "build-web: Node.js and npm are needed (apt-get install -y nodejs npm)" >&2; exit 1; }
# One build at a time (make run and the browser test may start one together).
exec 9>.build.lock
flock 9
stamp=node_modules/.cardroom-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # --ignore-scripts: no install script is needed (buf's binary comes in its platform package).
  npm ci --no-audit --no-fund --ignore-scripts >&2
  echo "$want" > "$stamp"
fi
npm run --silent build >&2
test -f dist/index.html
echo "$(pwd)/dist"
