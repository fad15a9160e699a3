#!/usr/bin/env bash
# Installs promtool, which internal/alertcheck's tests run to evaluate the
# PromQL of docs/metrics.md for real (promtool test rules: Prometheus's own
# rule engine, no server). It comes from Debian's prometheus package,
# downloaded with apt and unpacked into .tools/bin: the package itself is
# not installed, so no Prometheus server is set up or started. Run by make
# test (make tools); does nothing when .tools/bin/promtool or a promtool on
# PATH is there.
set -euo pipefail
cd "$(dirname "$0")/.."

dest=.tools/bin/promtool
if [ -x "$dest" ] || command -v promtool >/dev/null; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
download() { (cd "$tmp" && apt-get download -q prometheus >/dev/null 2>&1); }
if ! download; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q >/dev/null
  fi
  if ! download; then
    echo "tools: could not download Debian's prometheus package for promtool (apt-get update as root first); internal/alertcheck's tests skip, or fail under CI=true" >&2
    exit 0
  fi
fi
dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
mkdir -p "$(dirname "$dest")"
install -m 0755 "$tmp/x/usr/bin/promtool" "$dest"
echo "tools: $("$dest" --version 2>&1 | head -1) in $dest"
