#!/usr/bin/env bash
# Install the operations tools the test suite and `make run` use, when they are missing:
#
#   scripts/install-tools.sh prometheus   Debian's prometheus package (prometheus + promtool)
#   scripts/install-tools.sh kustomize    kubectl's built-in kustomize if present, else
#                                         `go install sigs.k8s.io/kustomize/kustomize/v5` into .cache/bin
#   scripts/install-tools.sh all
#
# Idempotent: a tool already on PATH is left alone. Installing Debian packages needs root (CI runs as
# root); the tests call this script themselves, as tests/services/pg.py does for PostgreSQL.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.5.0}"

say() { echo "install-tools: $*" >&2; }

apt_install() {
  if [ "$(id -u)" -ne 0 ]; then say "need root to apt-get install $*"; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  # one apt at a time on the machine (xdist workers: tests/services/pg.py and install-chromium.sh
  # take the same lock); a second apt-get would fail on dpkg's lock instead of waiting
  (
    flock 9
    apt-get update >/dev/null
    apt-get install -y --no-install-recommends "$@" >/dev/null
  ) 9>/tmp/cardroom-apt.lock
}

prometheus() {
  if command -v prometheus >/dev/null && command -v promtool >/dev/null; then return 0; fi
  say "installing Debian's prometheus package"
  apt_install prometheus
  # The package's service is not wanted: the tests and `make run` start their own Prometheus.
  if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
  command -v promtool >/dev/null || { say "promtool still missing after the install"; exit 1; }
}

kustomize() {
  if command -v kubectl >/dev/null && kubectl kustomize --help >/dev/null 2>&1; then return 0; fi
  if command -v kustomize >/dev/null || [ -x "$root/.cache/bin/kustomize" ]; then return 0; fi
  command -v go >/dev/null || { say "neither kubectl nor go is installed: cannot provide kustomize"; exit 1; }
  say "go install sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
  mkdir -p "$root/.cache/bin"
  GOBIN="$root/.cache/bin" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
}

case "${1:-all}" in
  prometheus) prometheus ;;
  kustomize) kustomize ;;
  all) prometheus; kustomize ;;
  *) echo "usage: $0 {prometheus|kustomize|all}" >&2; exit 2 ;;
esac
