#!/usr/bin/env bash
# Builds the browser client (web/) into web/dist: `npm ci` from web/package-lock.json (again only
# when the lock changed since the last one), then `npm run build` = buf generate (the message types
# from protos/, into web/src/gen) + tsc --noEmit + vite build. Nothing is done when web/dist is
# newer than every source of the client and every proto (--force builds anyway), so `make run` and
# the tests call it every time. Used by `make web`, `make run` and the web tests. Prints the dist
# directory. Needs Node.js 20+ with npm.
set -euo pipefail
cd "$(dirname "$0")/../web"
command -v npm >/dev/null || { echo "build-web: Node.js and npm are needed (apt-get install -y nodejs npm)" >&2; exit 1; }
# One build at a time (make run and the web tests may start one together); the second then finds
# the first's build up to date.
exec 9>.build.lock
flock 9
stamp=node_modules/.cardroom-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
fresh=yes
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # --ignore-scripts: no install script is needed (buf's binary comes in its platform package).
  npm ci --no-audit --no-fund --ignore-scripts >&2
  echo "$want" > "$stamp"
  fresh=no
fi
if [ "${1:-}" = "--force" ] || [ ! -f dist/index.html ]; then
  fresh=no
elif [ -n "$(find src index.html package.json package-lock.json tsconfig.json vite.config.ts buf.gen.yaml ../protos \
            -newer dist/index.html -not -path 'src/gen/*' -print -quit)" ]; then
  fresh=no
fi
if [ "$fresh" = no ]; then
  npm run --silent build >&2
else
  echo "build-web: web/dist is up to date" >&2
fi
test -f dist/index.html
echo "$(pwd)/dist"
