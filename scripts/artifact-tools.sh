#!/usr/bin/env bash
# Installs what internal/gen/export's tests need: Graphviz's dot (Debian's
# graphviz) to render the DOT export, and the npm packages of
# internal/gen/export/testdata/node (the official AsyncAPI 3.0 JSON Schema
# and parser, Mermaid's parser on jsdom) with npm ci from its
# package-lock.json; and Debian's chromium, the headless browser that
# acemq ui's end-to-end test drives (cmd/acemq/internal/ui, chromedp). Run
# by make test (make tools); does nothing when all is in place.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
  if [ "$(id -u)" != 0 ]; then
    echo "tools: $* missing and not root: apt-get -o DPkg::Lock::Timeout=300 install $* (the tests that need it skip, or fail under CI=true)" >&2
    return 0
  fi
  apt-get -o DPkg::Lock::Timeout=300 install -y -q "$@" >/dev/null 2>&1 || { apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null && apt-get -o DPkg::Lock::Timeout=300 install -y -q "$@" >/dev/null; }
}

command -v dot >/dev/null || apt_install graphviz
command -v npm >/dev/null || apt_install nodejs npm
command -v chromium >/dev/null || apt_install chromium

dir=internal/gen/export/testdata/node
if command -v npm >/dev/null; then
  # npm ci rewrites node_modules: only when it was made from another lock
  # file (a stamp in node_modules keeps the lock file's hash).
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  stamp=$dir/node_modules/.acemq-lock.sha256
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
  fi
fi
