#!/usr/bin/env bash
# Installs the corpus tests' second implementations (avsc, ajv, ajv-formats,
# json-schema-faker) into internal/crosscheck/node_modules with npm ci, from
# the committed package-lock.json; nothing when they are current. Needs node
# and npm: as root with apt, installs Debian's nodejs and npm when missing.
# Without them the cross-checks skip on a developer machine; under CI=true
# this script (and those tests) fail.
set -euo pipefail
cd "$(dirname "$0")/../internal/crosscheck"

fail() {
  echo "crosscheck: $*" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  echo "crosscheck: the avsc/ajv corpus cross-checks will skip" >&2
  exit 0
}

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    echo "crosscheck: installing Debian's nodejs and npm" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >/dev/null || fail "apt-get install nodejs npm failed"
  else
    fail "node and npm are needed (apt-get install nodejs npm)"
  fi
fi

# npm ci writes node_modules/.package-lock.json: the same dependencies as
# package-lock.json means the install is current.
if [ -f node_modules/.package-lock.json ] && node -e '
  const a = require("./package-lock.json").packages, b = require("./node_modules/.package-lock.json").packages;
  const strip = (p) => JSON.stringify(Object.keys(p).filter((k) => k).sort().map((k) => [k, p[k].version, p[k].integrity]));
  process.exit(strip(a) === strip(b) ? 0 : 1);' 2>/dev/null; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error || fail "npm ci failed in internal/crosscheck"
