#!/usr/bin/env bash
# Runs every fuzz target of the repository (each func Fuzz* in a _test.go
# file, found here rather than listed, so a new one is never left out) for
# FUZZTIME (default 1m) each. Their seed corpora run in make test already.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-1m}
GO=${GO:-go}
n=0
while IFS=: read -r file _ decl; do
  name=${decl#func }
  name=${name%%(*}
  dir=./$(dirname "${file#./}")
  echo "== $name ($dir)"
  "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$dir" || exit 1
  n=$((n + 1))
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' . | grep -v -e '/node_modules/' -e '/.tools/' | sort)
echo "== $n fuzz targets ran for $FUZZTIME each"
